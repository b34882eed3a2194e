"""Build files (rules/build, HIP7xx): the rule kinds of CMake commands and of the build-file
token tables (nvcc flags, CUDA libraries), and the fixes that need a whole CMake command."""

from . import cmake_fixes, cmake_kinds, table_kinds  # noqa: F401
