"""CMake frontend (CMakeLists.txt, *.cmake), grammar: tree-sitter-cmake."""

from __future__ import annotations

from ...lang import parse as parsing
from .build import BuildFrontend


def _grammar():
    import tree_sitter_cmake

    return tree_sitter_cmake.language()


parsing.register_grammar("cmake", _grammar)


class CMakeFrontend(BuildFrontend):
    language = "cmake"
    comment_kinds = ("line_comment", "bracket_comment")
