"""HIP138: `constexpr` functions whose only statement returns a call of a math function. nvcc's
host compiler (GCC) folds `::log(10.f)` as a constant, so nvcc accepts them; clang does not (its
math functions and HIP's device math functions are not `constexpr`), and a `constexpr` function
that can never be a constant expression is an error in clang (-Winvalid-constexpr, an error by
default)."""

from __future__ import annotations

from ...engine.pattern import capture
from ...engine.predicates import predicate
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
        if n.type == "conditional_expression":
            return False  # another branch may be constant
    for n in walk(expr):
        if n.type == "call_expression" and callee_name(n, data) in MATH:
            return {"CALL": capture(n, data, " ".join(text(n, data).split()))}
    return False
