"""Python (rules/python, HIP6xx): CUDA embedded in strings, programs and environment variables,
nvcc flags and qualified names in Python; none of the kinds imports libcst until a Python file
is linted."""

from . import commands, embedded, env, nvcc_flags, qualified_names  # noqa: F401
