"""CUDA types and keywords whose HIP counterpart is of another form, so that code valid with nvcc
stops compiling once the names are HIP's:

- HIP134: handles that are integers in CUDA and pointers in HIP (`CUdeviceptr`, texture and
  surface objects) used in integer arithmetic or bit operations;
- HIP135: `min` / `max` with a built-in coordinate (`blockDim.x`) argument: in HIP the
  coordinates are objects that convert to `uint32_t`, not `unsigned int` values, so the call no
  longer picks the unsigned overload;
- HIP136: `__grid_constant__`, which neither clang nor any HIP header defines.

Both CUDA and HIP spellings match, so the findings hold before and after the rename.
"""

from __future__ import annotations

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.expr_types import expression_type
from ...lang.cxx.syntax import call_args, literal_suffix, named, text
from ...lang.lazy_regex import LazyRegex

# ------------------------------------------------------------------------------ HIP134

# type -> what it is on each side. CUDA: cuda.h (`typedef unsigned long long CUdeviceptr_v2`),
# texture_types.h / surface_types.h (`typedef unsigned long long cudaTextureObject_t`).
# HIP: driver_types.h (`typedef void* hipDeviceptr_t`), texture_types.h
# (`typedef struct __hip_texture* hipTextureObject_t`), surface_types.h
# (`typedef struct __hip_surface* hipSurfaceObject_t`).
_HIP_POINTER = {
    "hipDeviceptr_t": "void*",
    "hipTextureObject_t": "struct __hip_texture*",
    "hipSurfaceObject_t": "struct __hip_surface*",
}
HANDLES = {
    "CUdeviceptr": "hipDeviceptr_t", "CUdeviceptr_v2": "hipDeviceptr_t", "hipDeviceptr_t": "hipDeviceptr_t",
    "cudaTextureObject_t": "hipTextureObject_t", "CUtexObject": "hipTextureObject_t",
    "hipTextureObject_t": "hipTextureObject_t",
    "cudaSurfaceObject_t": "hipSurfaceObject_t", "CUsurfObject": "hipSurfaceObject_t",
    "hipSurfaceObject_t": "hipSurfaceObject_t",
}
# Operators an integer takes and a pointer does not (`+`/`-` do not take `void*` or a pointer to
# an incomplete struct either).
_INTEGER_OPERATORS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>",
                                "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})


def _handle(node, data: bytes) -> str | None:
    t = expression_type(node, data)
    return t.name if t is not None and t.pointers == 0 and t.name in HANDLES else None


@predicate("handle-integer-arithmetic", requires=tuple(HANDLES))
def handle_integer_arithmetic(node, env, ctx, args):
    """`ptr + off`, `obj >> 32`, `dptr += n` on a handle HIP defines as a pointer. Adds $WHAT."""
    data = ctx.data
    op = node.child_by_field_name("operator")
    if op is None or text(op, data) not in _INTEGER_OPERATORS:
        return False
    for side in ("left", "right"):
        operand = node.child_by_field_name(side)
        name = _handle(operand, data)
        if name is not None:
            hip = HANDLES[name]
            what = (f"`{' '.join(text(operand, data).split())}` is a `{name}`: an integer in CUDA "
                    f"(`unsigned long long`), but HIP's `{hip}` is `{_HIP_POINTER[hip]}`")
            return {"WHAT": capture(node, data, what), "OP": capture(op, data)}
    return False


# ------------------------------------------------------------------------------ HIP135

_COORDINATES = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
_UNSIGNED = LazyRegex(r"^(?:unsigned(?: int| long| long long| short| char)?|uint|uint(?:8|16|32|64)_t|size_t|"
                       r"unsigned long int|long unsigned int|uintptr_t)$")


def _coordinate(node, data: bytes) -> bool:
    while node is not None and node.type == "parenthesized_expression" and len(named(node)) == 1:
        node = named(node)[0]
    if node is None or node.type != "field_expression":
        return False
    base = node.child_by_field_name("argument")
    field = node.child_by_field_name("field")
    return (base is not None and base.type == "identifier" and text(base, data) in _COORDINATES
            and field is not None and text(field, data) in ("x", "y", "z"))


def _unsigned(node, data: bytes) -> bool:
    """An expression the file shows to be unsigned (declared type, `u` literal, coordinate)."""
    if _coordinate(node, data):
        return True
    if node.type == "number_literal":
        return "u" in literal_suffix(node, data).lower()
    t = expression_type(node, data)
    return t is not None and t.pointers == 0 and bool(_UNSIGNED.match(t.name))


def _min_max_call(node, data: bytes) -> tuple[str, list] | None:
    fn = node.child_by_field_name("function")
    if fn is not None and fn.type == "qualified_identifier" and text(fn, data).startswith("::"):
        fn = fn.child_by_field_name("name")
    if fn is None or fn.type != "identifier" or text(fn, data) not in ("min", "max"):
        return None
    args = call_args(node)
    if len(args) != 2 or not any(_coordinate(a, data) for a in args):
        return None
    return text(fn, data), args


@predicate("coordinate-min-max", callees=("min", "max"), requires=tuple(_COORDINATES))
def coordinate_min_max(node, env, ctx, args):
    """`min(n, blockDim.x)`. Adds $CALL."""
    got = _min_max_call(node, ctx.data)
    if got is None:
        return False
    return {"CALL": capture(node, ctx.data, " ".join(text(node, ctx.data).split()))}


@fix_builder("coordinate-to-unsigned")
def coordinate_to_unsigned(match, ctx, rule):
    """`static_cast<unsigned int>(blockDim.x)`: the type CUDA's `uint3`/`dim3` fields have. Safe
    only where the other argument is unsigned too: the call then is `min(unsigned, unsigned)` on
    both sides; with a signed argument CUDA's mixed overload and HIP's differ."""
    data = ctx.data
    got = _min_max_call(match.node, data)
    if got is None:
        return False
    _, args = got
    if not all(_unsigned(a, data) for a in args):
        return BuiltFix(None)
    edits = [Edit(a.start_byte, a.end_byte, f"static_cast<unsigned int>({text(a, data)})")
             for a in args if _coordinate(a, data)]
    return BuiltFix(edits, description="Cast the coordinate to `unsigned int`")


# ------------------------------------------------------------------------------ HIP136


@predicate("grid-constant", requires=("__grid_constant__",))
def grid_constant(node, env, ctx, args):
    return text(node, ctx.data) == "__grid_constant__"
