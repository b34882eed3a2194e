"""Conditional directives in a tree-sitter-cuda tree: the test of each, as text for conditions.py,
where an identifier sits in one, the branches around a place, and the lines a test governs."""

from __future__ import annotations

import re
from typing import NamedTuple

import tree_sitter as ts

from .conditions import Build, parse, value

IF_KINDS = frozenset({"preproc_if", "preproc_elif"})
IFDEF_KINDS = frozenset({"preproc_ifdef", "preproc_elifdef"})
BRANCH_KINDS = IF_KINDS | IFDEF_KINDS
ARM_KINDS = frozenset({"preproc_elif", "preproc_elifdef", "preproc_else"})
CONDITIONAL_KINDS = BRANCH_KINDS | {"preproc_else"}


def _line_end(data: bytes, pos: int) -> int:
    """End of the directive line at `pos`: continuations and block comments spanning lines
    belong to it."""
    n = len(data)
    j = pos
    while j < n:
        c = data[j]
        if c == 0x0A:
            if data[j - 1:j] == b"\\" or data[j - 2:j] == b"\\\r":
                j += 1
                continue
            return j
        if c == 0x2F and data.startswith(b"/*", j):
            close = data.find(b"*/", j + 2)
            j = n if close < 0 else close + 2
            continue
        j += 1
    return n


def negated(directive: ts.Node) -> bool:
    """An `#ifndef` / `#elifndef`."""
    return bool(directive.children) and directive.children[0].type in ("#ifndef", "#elifndef")


def test_text(directive: ts.Node, data: bytes) -> str | None:
    """The test of an `#if` / `#elif` / `#ifdef` / `#ifndef` / `#elifdef` directive as the text of
    a condition (`#ifndef X`: `!defined(X)`), read from the directive's line: tree-sitter's
    expression nodes lose a condition it cannot parse (`__has_include(<a.h>)`) and what follows."""
    if directive.type in IFDEF_KINDS:
        name = directive.child_by_field_name("name")
        if name is None:
            return None
        text = data[name.start_byte:name.end_byte].decode("utf-8", "replace")
        return f"!defined({text})" if negated(directive) else f"defined({text})"
    if directive.type not in IF_KINDS or not directive.children:
        return None
    keyword = directive.children[0]
    return data[keyword.end_byte:_line_end(data, keyword.end_byte)].decode("utf-8", "replace")


def truth(directive: ts.Node, data: bytes, build: Build) -> bool | None:
    """Whether the directive's own test holds in `build` (for #ifndef: that the macro is not defined)."""
    text = test_text(directive, data)
    if text is None:
        return None
    v = value(parse(text), build)
    return None if v is None else v != 0


class Place(NamedTuple):
    """Where an identifier of a condition is: the directive, and how it is tested."""

    directive: ts.Node  # preproc_if / preproc_elif / preproc_ifdef (#ifdef, #ifndef)
    how: str  # "ifdef" / "ifndef" (the directive's name), "defined" (inside defined()), "value"
    defined: ts.Node | None  # the preproc_defined node, for "defined"


_CONDITION_PARTS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression", "preproc_defined",
                              "call_expression", "argument_list", "ERROR"})


def place(node: ts.Node | None) -> Place | None:
    """The condition `node` (an identifier) is part of, or None outside conditions."""
    if node is None:
        return None
    parent = node.parent
    if parent is None:
        return None
    if parent.type in IFDEF_KINDS and parent.child_by_field_name("name") == node:
        return Place(parent, "ifndef" if negated(parent) else "ifdef", None)
    defined = parent if parent.type == "preproc_defined" else None
    n = node
    while n.parent is not None:
        p = n.parent
        if p.type in IF_KINDS:
            if p.child_by_field_name("condition") == n:
                return Place(p, "defined" if defined is not None else "value", defined)
            return None
        if p.type not in _CONDITION_PARTS:
            return None
        n = p
    return None


def condition_of(directive: ts.Node) -> ts.Node | None:
    if directive.type in IF_KINDS:
        return directive.child_by_field_name("condition")
    return None


def governed_lines(directive: ts.Node, data: bytes) -> tuple[int, int]:
    """(first, last) 1-based lines of the code whose compilation the directive's test decides:
    from the directive to the `#endif` of its chain (its `#elif`/`#else` branches included)."""
    top = directive
    while top.parent is not None and top.type in ARM_KINDS:
        top = top.parent
    end = max(directive.end_byte, top.end_byte) - 1
    return data.count(b"\n", 0, directive.start_byte) + 1, data.count(b"\n", 0, max(end, directive.start_byte)) + 1


def header_text(directive: ts.Node, data: bytes) -> str:
    """`#if A && B` / `#ifdef X`: the directive's first line, continuations joined, trimmed."""
    if directive.type in IF_KINDS:
        cond = directive.child_by_field_name("condition")
        end = cond.end_byte if cond is not None else directive.start_byte
    else:
        name = directive.child_by_field_name("name")
        end = name.end_byte if name is not None else directive.start_byte
    text = data[directive.start_byte:end].decode("utf-8", "replace")
    text = " ".join(re.sub(r"\\\r?\n", " ", text).split())
    return text if len(text) <= 100 else text[:97] + "..."


def branch_tests(tree: ts.Tree, pos: int) -> list[tuple[ts.Node, bool]]:
    """The conditions a preprocessor must meet to compile the byte at `pos`: (branch node, wanted
    truth), outermost last. A place in the condition of a branch itself is not under it."""
    out: list[tuple[ts.Node, bool]] = []
    cur = tree.root_node.descendant_for_byte_range(pos, pos)
    while cur is not None:
        if cur.type in BRANCH_KINDS:
            alternative = cur.child_by_field_name("alternative")
            test = cur.child_by_field_name("condition") or cur.child_by_field_name("name")
            if alternative is not None and alternative.start_byte <= pos < alternative.end_byte:
                out.append((cur, False))
            elif test is not None and pos >= test.end_byte:
                out.append((cur, True))
        cur = cur.parent
    return out


def compiled(tree: ts.Tree, data: bytes, pos: int, build: Build) -> bool | None:
    """Whether `build` compiles the byte at `pos`."""
    result: bool | None = True
    for node, wanted in branch_tests(tree, pos):
        got = truth(node, data, build)
        if got is None:
            result = None
        elif got != wanted:
            return False
    return result


def branch_kinds(tree: ts.Tree, data: bytes, pos: int, hip_clang: Build, cuda: Build) -> frozenset[str]:
    """"nvcc-only" if hip-clang (`hip_clang`, macros.HIP_CLANG) never compiles the byte at `pos`,
    "hip-only" if nvcc's build of the CUDA code (`cuda`, macros.cuda) never does."""
    if b"#" not in data:
        return frozenset()
    kinds = set()
    if compiled(tree, data, pos, hip_clang) is False:
        kinds.add("nvcc-only")
    if compiled(tree, data, pos, cuda) is False:
        kinds.add("hip-only")
    return frozenset(kinds)
