"""HIP138: `constexpr` functions whose only statement returns a call of a math function. nvcc's
host compiler (GCC) folds `::log(10.f)` as a constant, so nvcc accepts them; clang does not (its
math functions and HIP's device math functions are not `constexpr`), and a `constexpr` function
that can never be a constant expression is an error in clang (-Winvalid-constexpr, an error by
default).

The fix drops `constexpr` (writing `inline`, which `constexpr` implied): clang could never evaluate
the function as a constant, so no well-formed use changes. It is offered only where the file
does not use the function where a constant is needed (a `constexpr` variable, `static_assert`,
a template argument, an array bound, a `case` label, an enumerator): there the value must be
written out by hand."""

from __future__ import annotations

import re

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import callee_name, named, text, walk

_FAMILIES = ("log", "log10", "log2", "log1p", "exp", "exp2", "expm1", "sqrt", "cbrt", "pow", "sin", "cos",
             "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
             "hypot", "erf", "erfc", "tgamma", "lgamma")
MATH = frozenset(n for f in _FAMILIES for n in (f, f + "f", "std::" + f, "::" + f, "::" + f + "f"))


def _only_return(body) -> object | None:
    """The expression of a body that is `{ return EXPR; }`."""
    if body is None or body.type != "compound_statement":
        return None
    stmts = named(body)
    if len(stmts) != 1 or stmts[0].type != "return_statement":
        return None
    inner = named(stmts[0])
    return inner[0] if len(inner) == 1 else None


@predicate("constexpr-math-call", requires=_FAMILIES)
def constexpr_math_call(node, env, ctx, args):
    """On the declarator of a `constexpr` function definition. Adds $CALL."""
    data = ctx.data
    fn = node.parent
    if fn is None or fn.type != "function_definition" or fn.child_by_field_name("declarator") != node:
        return False
    if not any(c.type in ("type_qualifier", "storage_class_specifier") and text(c, data) == "constexpr"
               for c in fn.children):
        return False
    expr = _only_return(fn.child_by_field_name("body"))
    if expr is None:
        return False
    for n in walk(expr):
        if n.type == "conditional_expression" or (n.type == "binary_expression" and text(
                n.child_by_field_name("operator"), data) in ("&&", "||")):
            return False  # another branch may be constant
    for n in walk(expr):
        if n.type == "call_expression" and callee_name(n, data) in MATH:
            return {"CALL": capture(n, data, " ".join(text(n, data).split()))}
    return False


# where a use needs a constant
_CONSTANT_CONTEXTS = frozenset({"static_assert_declaration", "template_argument_list", "array_declarator",
                                "case_statement", "enumerator", "bitfield_clause"})


def _constexpr_token(fn, data: bytes):
    return next((c for c in fn.children
                 if c.type in ("type_qualifier", "storage_class_specifier") and text(c, data) == "constexpr"), None)


def _used_as_constant(root, name: str, data: bytes) -> bool:
    for m in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\b", data):
        node = root.descendant_for_byte_range(m.start(), m.end())
        cur = node
        while cur is not None:
            if cur.type in _CONSTANT_CONTEXTS or (cur.type == "if_statement" and b"constexpr" in data[
                    cur.start_byte:cur.child_by_field_name("condition").start_byte]):
                return True
            if cur.type in ("declaration", "field_declaration") and _constexpr_token(cur, data) is not None:
                return True
            if cur.type in ("function_definition", "compound_statement"):
                break
            cur = cur.parent
    return False


@fix_builder("constexpr-to-inline")
def constexpr_to_inline(match, ctx, rule):
    """`constexpr` -> `inline` on the definition, unless the file uses the function as a constant."""
    data = ctx.data
    fn = match.node.parent
    token = _constexpr_token(fn, data)
    declarator = match.node.child_by_field_name("declarator")
    root = fn
    while root.parent is not None:
        root = root.parent
    if token is None or declarator is None or _used_as_constant(root, text(declarator, data).split("::")[-1], data):
        return BuiltFix(None)
    inline = any(c.type == "storage_class_specifier" and text(c, data) == "inline" for c in fn.children)
    if inline:
        end = token.end_byte
        while data[end:end + 1] in (b" ", b"\t"):
            end += 1
        return BuiltFix([Edit(token.start_byte, end, "")], description="Drop `constexpr`")
    return BuiltFix([Edit(token.start_byte, token.end_byte, "inline")], description="`inline` for `constexpr`")
