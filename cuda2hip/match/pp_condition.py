"""Preprocessor conditions: where an identifier sits in one, and what the condition evaluates to
once some macros are known to be undefined.

The evaluation is three-valued: a number, or None where the value depends on something this file
does not decide (another macro, a -D flag, which headers were included). `0 && x` is 0 and
`1 || x` is 1 whatever x is, so a condition can be decided with parts of it unknown.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

import tree_sitter as ts

from ..lazy_regex import LazyRegex

DIRECTIVES = frozenset({"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"})
_NUMBER = LazyRegex(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)$")


class Place(NamedTuple):
    """Where an identifier of a condition is: the directive, and how it is tested."""

    directive: ts.Node  # preproc_if / preproc_elif / preproc_ifdef (#ifdef, #ifndef)
    how: str  # "ifdef" / "ifndef" (the directive's name), "defined" (inside defined()), "value"
    defined: ts.Node | None  # the preproc_defined node, for "defined"


def place(node: ts.Node | None) -> Place | None:
    """The condition `node` (an identifier) is part of, or None outside conditions."""
    if node is None:
        return None
    parent = node.parent
    if parent is None:
        return None
    if parent.type in ("preproc_ifdef", "preproc_elifdef") and parent.child_by_field_name("name") == node:
        first = parent.children[0].type if parent.children else ""
        return Place(parent, "ifndef" if first in ("#ifndef", "#elifndef") else "ifdef", None)
    defined = parent if parent.type == "preproc_defined" else None
    n = node
    while n.parent is not None:
        p = n.parent
        if p.type in ("preproc_if", "preproc_elif"):
            if p.child_by_field_name("condition") == n:
                return Place(p, "defined" if defined is not None else "value", defined)
            return None
        if p.type not in ("binary_expression", "unary_expression", "parenthesized_expression", "preproc_defined",
                          "call_expression", "argument_list", "ERROR"):
            return None
        n = p
    return None


def condition_of(directive: ts.Node) -> ts.Node | None:
    if directive.type in ("preproc_if", "preproc_elif"):
        return directive.child_by_field_name("condition")
    return None


def governed_lines(directive: ts.Node, data: bytes) -> tuple[int, int]:
    """(first, last) 1-based lines of the code whose compilation the directive's test decides:
    from the directive to the `#endif` of its chain (its `#elif`/`#else` branches included)."""
    top = directive
    while top.parent is not None and top.type in ("preproc_elif", "preproc_elifdef", "preproc_else"):
        top = top.parent
    end = max(directive.end_byte, top.end_byte) - 1
    return data.count(b"\n", 0, directive.start_byte) + 1, data.count(b"\n", 0, max(end, directive.start_byte)) + 1


def header_text(directive: ts.Node, data: bytes) -> str:
    """`#if A && B` / `#ifdef X`: the directive's first line, continuations joined, trimmed."""
    if directive.type in ("preproc_if", "preproc_elif"):
        cond = directive.child_by_field_name("condition")
        end = cond.end_byte if cond is not None else directive.start_byte
    else:
        name = directive.child_by_field_name("name")
        end = name.end_byte if name is not None else directive.start_byte
    text = data[directive.start_byte:end].decode("utf-8", "replace")
    text = " ".join(re.sub(r"\\\r?\n", " ", text).split())
    return text if len(text) <= 100 else text[:97] + "..."


Lookup = Callable[[str], "int | None"]  # value of an identifier: a number, or None (unknown)
Defined = Callable[[str], "bool | None"]  # whether a macro is defined: True/False, or None (unknown)


def truth(directive: ts.Node, data: bytes, value: Lookup, defined: Defined) -> bool | None:
    """Whether the directive's own test holds (for #ifndef: that the macro is not defined)."""
    if directive.type in ("preproc_ifdef", "preproc_elifdef"):
        name = directive.child_by_field_name("name")
        if name is None:
            return None
        d = defined(_text(name, data))
        if d is None:
            return None
        first = directive.children[0].type
        return (not d) if first in ("#ifndef", "#elifndef") else d
    cond = condition_of(directive)
    if cond is None:
        return None
    got = evaluate(cond, data, value, defined)
    return None if got is None else got != 0


def evaluate(node: ts.Node, data: bytes, value: Lookup, defined: Defined) -> int | None:
    t = node.type
    if t == "number_literal":
        return _number(_text(node, data))
    if t == "identifier":
        name = _text(node, data)
        if name == "true":
            return 1
        if name == "false":
            return 0
        return value(name)
    if t in ("true", "false"):
        return 1 if t == "true" else 0
    if t == "preproc_defined":
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        if ident is None:
            return None
        d = defined(_text(ident, data))
        return None if d is None else int(d)
    if t == "parenthesized_expression":
        inner = node.named_children
        return evaluate(inner[0], data, value, defined) if len(inner) == 1 else None
    if t == "unary_expression":
        op = node.child_by_field_name("operator")
        arg = node.child_by_field_name("argument")
        v = evaluate(arg, data, value, defined) if arg is not None else None
        if v is None or op is None:
            return None
        return {"!": lambda x: int(not x), "-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~x}.get(
            op.type, lambda x: None)(v)
    if t == "binary_expression":
        return _binary(node, data, value, defined)
    return None  # function-like macros, character literals, recovered errors: unknown


def _binary(node: ts.Node, data: bytes, value: Lookup, defined: Defined) -> int | None:
    op = node.child_by_field_name("operator")
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if op is None or left is None or right is None:
        return None
    a = evaluate(left, data, value, defined)
    o = op.type
    if o == "&&" and a == 0:
        return 0
    if o == "||" and a is not None and a != 0:
        return 1
    b = evaluate(right, data, value, defined)
    if o == "&&":
        if b == 0:
            return 0
        return None if a is None or b is None else 1
    if o == "||":
        if b is not None and b != 0:
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    try:
        return _OPS[o](a, b)
    except (KeyError, ZeroDivisionError):
        return None


_OPS = {
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b), "%": lambda a, b: a - b * int(a / b),
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


def _number(text: str) -> int | None:
    m = _NUMBER.match(text)
    if m is None:
        return None
    digits = m.group(1).replace("'", "")
    try:
        if digits[:2] in ("0x", "0X"):
            return int(digits, 16)
        if digits[:2] in ("0b", "0B"):
            return int(digits[2:], 2)
        if len(digits) > 1 and digits[0] == "0":
            return int(digits, 8)
        return int(digits)
    except ValueError:
        return None


def _text(node: ts.Node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


def numeric_macros(root: ts.Node, data: bytes) -> dict[str, int]:
    """Object-like macros the file defines unconditionally (top level, or inside its include
    guard) as a plain number: `#define CUDART_HMASK 12000 // CUDA 12.0`."""
    out: dict[str, int] = {}
    children = [c for c in root.children if c.type != "comment"]
    scopes = [root]
    if len(children) == 1 and children[0].type == "preproc_ifdef":
        scopes.append(children[0])  # an include guard
    for scope in scopes:
        for c in scope.named_children:
            if c.type != "preproc_def":
                continue
            name = c.child_by_field_name("name")
            val = c.child_by_field_name("value")
            if name is None or val is None:
                continue
            text = re.sub(r"//.*|/\*.*?\*/", "", _text(val, data)).strip()
            num = _number(text)
            if num is not None:
                out.setdefault(_text(name, data), num)
    return out
