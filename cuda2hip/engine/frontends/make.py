"""Makefile frontend (Makefile, makefile, GNUmakefile, *.mk), grammar: tree-sitter-make."""

from __future__ import annotations

from ...lang import parse as parsing
from .build import BuildFrontend


def _grammar():
    import tree_sitter_make

    return tree_sitter_make.language()


parsing.register_grammar("make", _grammar)


class MakeFrontend(BuildFrontend):
    language = "make"
    comment_kinds = ("comment",)
