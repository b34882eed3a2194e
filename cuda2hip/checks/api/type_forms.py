"""CUDA types and keywords whose HIP counterpart is of another form, so that code valid with nvcc
stops compiling once the names are HIP's:

- HIP134: handles that are integers in CUDA and pointers in HIP (`CUdeviceptr`, texture and
  surface objects) used in integer arithmetic or bit operations;
- HIP135: `min` / `max` with a built-in coordinate (`blockDim.x`) argument: in HIP the
  coordinates are objects that convert to `uint32_t`, not `unsigned int` values, so the call no
  longer picks the unsigned overload;
- HIP136: `__grid_constant__`, which neither clang nor any HIP header defines;
- HIP150-HIP152: conversions HIP's overloads leave ambiguous or missing (`h2 = {a, b}` on a
  `__half2`, `dim3 d = make_uint3(...)`, `__ffsll(uint64_t)`).

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


# ------------------------------------------------------------------------------ HIP145

# Register calls -> index of their `flags` parameter (CUDA 13 cuda_gl_interop.h; HIP's
# hip_gl_interop.h / hip_runtime_api.h declare the same parameters).
_REGISTER_FLAGS_AT = {"cudaGraphicsGLRegisterBuffer": 2, "hipGraphicsGLRegisterBuffer": 2,
                      "cudaGraphicsGLRegisterImage": 3, "hipGraphicsGLRegisterImage": 3}
# cudaGraphicsMapFlags value -> the cudaGraphicsRegisterFlags / hipGraphicsRegisterFlags enumerator
# of the same value (CUDA driver_types.h: None 0, ReadOnly 1, WriteDiscard 2 in both enums).
MAP_FLAG_SUFFIXES = ("None", "ReadOnly", "WriteDiscard")
_MAP_FLAGS = frozenset(f"{p}GraphicsMapFlags{s}" for p in ("cuda", "hip") for s in MAP_FLAG_SUFFIXES)


@predicate("map-flag-as-register-flag", requires=tuple(_MAP_FLAGS))
def map_flag_as_register_flag(node, env, ctx, args):
    """`cudaGraphicsGLRegisterBuffer(&r, vbo, cudaGraphicsMapFlagsWriteDiscard)`: the flags
    argument of a register call given as a map flag. Adds $FLAG (the register flag to write)."""
    data = ctx.data
    name = text(node, data)
    if name not in _MAP_FLAGS:
        return False
    arglist = node.parent
    call = arglist.parent if arglist is not None and arglist.type == "argument_list" else None
    if call is None or call.type != "call_expression":
        return False
    fn = call.child_by_field_name("function")
    index = _REGISTER_FLAGS_AT.get(text(fn, data))
    args_ = call_args(call)
    if index is None or index >= len(args_) or args_[index] != node:
        return False
    suffix = name.split("GraphicsMapFlags", 1)[1]
    return {"FLAG": capture(node, data, f"hipGraphicsRegisterFlags{suffix}")}


# ------------------------------------------------------------------------------ HIP150-HIP152
# Overload sets HIP's headers declare differently from CUDA's, so that a conversion nvcc makes
# is ambiguous or missing in HIP. The fixes spell out the conversion CUDA made implicitly.

_HALF2 = frozenset({"__half2", "half2", "__nv_half2"})
# HIP 7.2 amd_device_functions.h: __ffsll(unsigned long long), __ffsll(long long)
_FFSLL_AMBIGUOUS = frozenset({"uint64_t", "int64_t", "std::uint64_t", "std::int64_t", "unsigned long",
                              "unsigned long int", "long", "long int", "size_t", "std::size_t", "ssize_t",
                              "ptrdiff_t", "int", "unsigned", "unsigned int", "uint32_t", "int32_t", "short",
                              "unsigned short", "char", "unsigned char", "bool"})


@predicate("half2-brace-assignment", requires=tuple(_HALF2))
def half2_brace_assignment(node, env, ctx, args):
    """`h = {a, b}` / `h = {}` on a `__half2`: HIP's `__half2` has several assignment operators
    a brace list fits. Adds $LHS and $TYPE."""
    right = node.child_by_field_name("right")
    op = node.child_by_field_name("operator")
    if right is None or right.type != "initializer_list" or op is None or text(op, ctx.data) != "=":
        return False
    t = expression_type(node.child_by_field_name("left"), ctx.data)
    if t is None or t.pointers != 0 or t.name not in _HALF2:
        return False
    return {"LHS": capture(node.child_by_field_name("left"), ctx.data), "TYPE": capture(right, ctx.data, "__half2")}


@fix_builder("half2-brace-type")
def half2_brace_type(match, ctx, rule):
    right = match.node.child_by_field_name("right")
    name = match.env["TYPE"].text
    return BuiltFix([Edit(right.start_byte, right.start_byte, name)], description=f"Write `{name}{{...}}`")


@predicate("dim3-from-uint3", requires=("dim3",))
def dim3_from_uint3(node, env, ctx, args):
    """`dim3 d = make_uint3(...)` / `dim3 d = u` (a `uint3`): CUDA's dim3 converts from uint3,
    HIP's has no such constructor. Adds $VALUE."""
    data = ctx.data
    decl = node.parent
    if node.type != "init_declarator" or decl is None or decl.type != "declaration" \
            or text(decl.child_by_field_name("type"), data) != "dim3":
        return False
    value = node.child_by_field_name("value")
    if value is None:
        return False
    if value.type == "call_expression" and text(value.child_by_field_name("function"), data) == "make_uint3":
        return {"VALUE": capture(value, data)}
    t = expression_type(value, data)
    if t is not None and t.pointers == 0 and t.name == "uint3":
        return {"VALUE": capture(value, data)}
    return False


@fix_builder("dim3-components")
def dim3_components(match, ctx, rule):
    """`make_uint3(a, b, c)` -> `dim3(a, b, c)`; a `uint3` variable `u` -> `dim3(u.x, u.y, u.z)`."""
    value = match.node.child_by_field_name("value")
    data = ctx.data
    if value.type == "call_expression":
        fn = value.child_by_field_name("function")
        return BuiltFix([Edit(fn.start_byte, fn.end_byte, "dim3")], description="Write `dim3(...)`")
    if value.type == "identifier":
        u = text(value, data)
        return BuiltFix([Edit(value.start_byte, value.end_byte, f"dim3({u}.x, {u}.y, {u}.z)")],
                        description=f"Write `dim3({u}.x, {u}.y, {u}.z)`")
    return None


@predicate("ffsll-ambiguous", callees=frozenset({"__ffsll"}))
def ffsll_ambiguous(node, env, ctx, args):
    """`__ffsll(x)` with `x` of a type that is neither `long long` nor `unsigned long long`
    (`uint64_t` is `unsigned long` on Linux). Adds $TYPE."""
    arguments = call_args(node)
    if len(arguments) != 1:
        return False
    t = expression_type(arguments[0], ctx.data)
    if t is None or t.pointers != 0 or " ".join(t.name.split()) not in _FFSLL_AMBIGUOUS:
        return False
    return {"TYPE": capture(arguments[0], ctx.data, t.name)}


@fix_builder("ffsll-unsigned-long-long")
def ffsll_unsigned_long_long(match, ctx, rule):
    arg = call_args(match.node)[0]
    wrap = arg.type in ("identifier", "field_expression", "subscript_expression", "call_expression",
                        "parenthesized_expression")
    edits = [Edit(arg.start_byte, arg.start_byte, "(unsigned long long)" + ("" if wrap else "(")),
             *([] if wrap else [Edit(arg.end_byte, arg.end_byte, ")")])]
    return BuiltFix(edits, description="Convert the argument to `unsigned long long`")
