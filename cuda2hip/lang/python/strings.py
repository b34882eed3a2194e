"""The text of a string-valued Python expression, mapped back to the file.

A plain literal maps exactly (its fixes can be written back); f-strings, concatenations (`+` or
implicit), `%` formatting and `str.format` map piece by piece, with a placeholder for each
computed part, so findings land on the right spot but nothing is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .literals import PLACEHOLDER, LiteralSyntax, TextMap, decode_into, split_literal
from .module import PyModule

MAX_DEPTH = 8


@dataclass
class StringText:
    text: TextMap
    literal: cst.SimpleString | None  # set when the text is exactly this one literal
    syntax: LiteralSyntax | None
    how: str  # "literal", "f-string", "concatenation", ...
    exact: bool  # the decoded value equals what Python evaluates (checked)

    @property
    def rewritable(self) -> bool:
        return self.literal is not None and self.exact


def literal_text(node: cst.SimpleString, module: PyModule) -> StringText:
    start, _ = module.span(node)
    syntax, body = split_literal(node.value)
    tm = TextMap()
    decode_into(tm, body, start + len((syntax.prefix + syntax.quote).encode()), syntax)
    try:
        expected = node.evaluated_value
    except Exception:  # noqa: BLE001
        expected = None
    if isinstance(expected, bytes):
        expected = expected.decode("latin-1")
    return StringText(tm, node, syntax, "literal", tm.value == expected)


def text_of(expr: cst.BaseExpression, module: PyModule) -> StringText | None:
    """The text of a string expression (names followed to their single assignment), or None
    when it is not built from string literals."""
    expr = module.resolve(expr)
    if isinstance(expr, cst.SimpleString):
        return literal_text(expr, module)
    tm = TextMap()
    how = _pieces(expr, module, tm, MAX_DEPTH)
    if how is None:
        return None
    return StringText(tm, None, None, how, False)


def _placeholder(tm: TextMap, node: cst.CSTNode, module: PyModule) -> None:
    start, end = module.span(node)
    tm.add(PLACEHOLDER, start, end, exact=False)


def _pieces(expr, module: PyModule, tm: TextMap, depth: int) -> str | None:
    """Append the pieces of `expr` to `tm`; returns how the string is built, None if it is not
    a string expression."""
    if depth <= 0:
        return None
    expr = module.resolve(expr)
    if isinstance(expr, cst.SimpleString):
        tm.extend(literal_text(expr, module).text)
        return "literal"
    if isinstance(expr, cst.ConcatenatedString):
        if _pieces(expr.left, module, tm, depth - 1) is None or _pieces(expr.right, module, tm, depth - 1) is None:
            return None
        return "implicit concatenation"
    if isinstance(expr, cst.FormattedString):
        syntax, _ = split_literal(expr.start + expr.end)
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                start, _ = module.span(part)
                decode_into(tm, part.value, start, syntax, braces=True)
            else:
                _placeholder(tm, part, module)
        return "f-string"
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        found = False
        for side in (expr.left, expr.right):
            sub = TextMap()
            if _pieces(side, module, sub, depth - 1) is None:
                _placeholder(tm, side, module)  # a computed part
            else:
                tm.extend(sub)
                found = True
        return "concatenation" if found else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        if _pieces(expr.left, module, tm, depth - 1) is None:
            return None
        return "% formatting"
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "format"):
        base = module.resolve(expr.func.value)
        if isinstance(base, cst.SimpleString):
            start, _ = module.span(base)
            syntax, body = split_literal(base.value)
            decode_into(tm, body, start + len((syntax.prefix + syntax.quote).encode()), syntax,
                        braces=True, fields=True)
            return "str.format"
    return None
