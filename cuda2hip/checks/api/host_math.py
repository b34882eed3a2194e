"""HIP139: the `<cmath>` classification functions (`isfinite`, `isnan`, `isinf`, `signbit`, ...)
called unqualified in host code. clang's HIP wrapper headers (`__clang_hip_cmath.h`, included by
every hip-clang compilation) declare `__device__` overloads of them in the global namespace, and
`<cmath>` turns C's macros of the same names into `std::` functions: in a host or `__host__
__device__` function the global look-up then finds only the device overloads ("no matching
function for call to 'isfinite'", HIP 5.2, 6.4 and 7.2 alike), while nvcc finds the C library's.
`std::isfinite` names the same function on every platform. `<math.h>` brings the `std::` ones
into the global namespace (`using std::isfinite;`), so a file that includes it is fine."""

from __future__ import annotations

import re
from pathlib import Path

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.expr_types import expression_type
from ...lang.cxx.syntax import call_args, callee_name, enclosing_function, is_device_function, text
from .std_headers_dropped import compiled_with_hip

CLASSIFICATION = frozenset({
    "isfinite", "isnan", "isinf", "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal", "isless",
    "islessequal", "islessgreater", "isunordered",
})
ARITHMETIC = frozenset({
    "float", "double", "long double", "int", "unsigned", "unsigned int", "long", "unsigned long", "long long",
    "unsigned long long", "short", "unsigned short", "char", "signed char", "unsigned char", "bool", "size_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
})
_MATH_H = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<math\.h>", re.MULTILINE)


def _includes_math_h(ctx) -> bool:
    cache = ctx.file_cache
    if "host-math:math.h" not in cache:
        cache["host-math:math.h"] = _MATH_H.search(ctx.file_context.data) is not None
    return cache["host-math:math.h"]


def _own_definition(ctx, name: str) -> bool:
    """The file declares a function of that name itself (an overload for its own types)."""
    key = f"host-math:own:{name}"
    cache = ctx.file_cache
    if key not in cache:
        pattern = rb"\b(?:bool|int|auto)\s+(?:__\w+__\s+)*" + name.encode() + rb"\s*\([^)]"
        cache[key] = re.search(pattern, ctx.file_context.data) is not None
    return cache[key]


def _template_parameters(fn, data: bytes) -> set[str]:
    """The type parameters of the templates around a function (`T` of `template <class T>`)."""
    names: set[str] = set()
    node = fn.parent
    while node is not None:
        if node.type == "template_declaration":
            params = node.child_by_field_name("parameters")
            for p in params.named_children if params is not None else ():
                if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                              "variadic_type_parameter_declaration"):
                    names.update(text(c, data) for c in p.named_children if c.type == "type_identifier")
        node = node.parent
    return names


@predicate("host-math-classification", callees=CLASSIFICATION)
def host_math_classification(node, env, ctx, args):
    """An unqualified call of a classification function in a host or `__host__ __device__`
    function. Adds $NAME and $WHERE."""
    fn_node = node.child_by_field_name("function")
    if fn_node is None or fn_node.type != "identifier":
        return False  # std::isfinite, ::isfinite, obj.isfinite
    name = text(fn_node, ctx.data)
    if name not in CLASSIFICATION or ctx.is_fragment:
        return False  # a macro body: which functions it ends up in is unknown
    if not compiled_with_hip(ctx, runtime_include=False):
        return False  # plain C++ (a host compiler has no device overloads)
    fn = enclosing_function(node)
    while fn is not None and fn.type != "function_definition":
        fn = enclosing_function(fn)  # a lambda runs where the function that holds it runs
    if fn is None or is_device_function(fn, ctx.data):
        return False  # device code has the device overloads
    if _includes_math_h(ctx) or _own_definition(ctx, name):
        return False
    arguments = call_args(node)
    for arg in arguments:
        t = expression_type(arg, ctx.data)
        if t is not None and (t.pointers or t.name not in ARITHMETIC) and t.name not in _template_parameters(fn, ctx.data):
            return False  # a type of the project's own, whose overload argument-dependent look-up finds
    words = {text(c, ctx.data) for c in fn.children if c.type != "compound_statement"}
    where = "a `__host__ __device__` function" if "__host__" in words and "__device__" in words else "host code"
    return {"NAME": capture(fn_node, ctx.data), "WHERE": capture(node, ctx.data, where)}


# translation units: hipcc compiles them, hipRTC never does
SOURCE_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx"})


@fix_builder("host-math-std")
def host_math_std(match, ctx, rule):
    fn_node = match.node.child_by_field_name("function")
    name = text(fn_node, ctx.data)
    edits = [Edit(fn_node.start_byte, fn_node.start_byte, "std::")]
    if Path(ctx.path).suffix.lower() in SOURCE_SUFFIXES:
        return BuiltFix(edits, description=f"Call `std::{name}` (the same function in host and device code)")
    # a header may also be compiled by hipRTC (CuPy's and PyCUDA's run-time kernels), whose
    # wrapper headers declare no `std::` math functions (__clang_hip_cmath.h: `namespace std`
    # only `#if !defined(__HIPCC_RTC__)`)
    return BuiltFix(edits, applicability="unsafe",
                    description=f"Call `std::{name}` (a header hipRTC compiles too has no `std::{name}`: check)")
