"""Other AMD run-time hazards: inline PTX (HIP501), `__launch_bounds__` minimum-blocks
arguments (HIP502), texture references (HIP503), `__CUDA_ARCH__` (HIP504) and
`cudaMemoryType` integer values (HIP505)."""

from __future__ import annotations

import re

import tree_sitter as ts

from ..engine.builders import BuiltFix, fix_builder
from ..engine.pattern import capture
from ..engine.predicates import predicate
from ..findings import Edit
from ..lang.cxx.syntax import call_args, callee_name, find_declaration, int_value, named, text, walk

# ---------------------------------------------------------------- inline PTX

# PTX: dotted opcodes (`mov.u32`, `shfl.sync.bfly.b32`), `%%` special registers, `.reg` declarations.
PTX = re.compile(r"%%[a-z]|\b[a-z][a-z0-9]*(\.[a-z0-9]+)+\b|\.reg\b")
PTX_HINTS = (
    (re.compile(r"%%laneid"), "`__lane_id()`"),
    (re.compile(r"%%clock|%%globaltimer"), "`clock64()` / `wall_clock64()`"),
    (re.compile(r"\bshfl\."), "`__shfl*` / `__shfl*_sync`"),
    (re.compile(r"\bvote\."), "`__ballot` / `__any` / `__all`"),
    (re.compile(r"\bld\.global\.nc"), "`__ldg()`"),
    (re.compile(r"\bbar\.sync|\bbarrier\."), "`__syncthreads()`"),
    (re.compile(r"\bmembar\.|\bfence\."), "`__threadfence()` / `__threadfence_block()`"),
    (re.compile(r"\bw?mma\."), "rocWMMA (`rocwmma::mma_sync`)"),
    (re.compile(r"\bprmt\."), "`__byte_perm()`"),
    (re.compile(r"\bbrev\."), "`__brev()`"),
    (re.compile(r"\bpopc\."), "`__popc()` / `__popcll()`"),
    (re.compile(r"\bbfe\."), "`__bitextract_u32()`"),
)


def _string_content(node: ts.Node | None, data: bytes) -> str:
    if node is None:
        return ""
    return "".join(text(n, data) for n in walk(node) if n.type in ("string_content", "escape_sequence"))


@predicate("inline-ptx", requires=("asm",))  # asm / __asm / __asm__
def inline_ptx(node, env, ctx, args):
    """A GNU `asm(...)` statement whose code is PTX (AMDGCN asm and empty compiler barriers stay
    quiet). Adds $PTX (the first instruction) and $HINT."""
    code = _string_content(node.child_by_field_name("assembly_code"), ctx.data)
    m = PTX.search(code)
    if m is None:
        return False
    first = code.strip().split(";")[0].strip().replace("\\n", " ").replace("\\t", " ")
    first = " ".join(first.split())[:48]
    hints = [h for pat, h in PTX_HINTS if pat.search(code)]
    hint = ("HIP has " + " / ".join(hints) + " for this") if hints else "rewrite it in C++ or AMDGCN inline assembly"
    return {"PTX": capture(node, ctx.data, first), "HINT": capture(node, ctx.data, hint)}


# ---------------------------------------------------------------- __launch_bounds__

WAVE64 = 64


def _launch_bounds_args(node: ts.Node) -> list[ts.Node]:
    # tree-sitter-cuda knows two arguments; a third one leaves the second inside an ERROR node.
    out: list[ts.Node] = []
    for c in named(node):
        out.extend(named(c) if c.type == "ERROR" else [c])
    return out


@predicate("launch-bounds-min-blocks", requires=("__launch_bounds__",))
def launch_bounds_min_blocks(node, env, ctx, args):
    """`__launch_bounds__(MAX, MIN[, CLUSTER])`. Adds $MAX, $MIN, $VALUE (HIP's second argument
    for 64-lane wavefronts, or the formula) and $EXTRA (a note on a third argument).
    `__launch_bounds__(MAX, 1)` means what `__launch_bounds__(MAX)` means on both platforms (one
    resident block of MAX threads; at least one wave per EU): quiet."""
    parts = _launch_bounds_args(node)
    if len(parts) < 2:
        return False
    data = ctx.data
    mx, mn = parts[0], parts[1]
    a, b = int_value(mx, data), int_value(mn, data)
    if b == 1 and len(parts) == 2:
        return False
    if a is not None and b is not None:
        from fractions import Fraction  # rare: not imported by every run that loads this module

        v = Fraction(b * a, WAVE64 * 2)
        value = f"{b} × {a} / ({WAVE64} × 2) = {v.numerator if v.denominator == 1 else float(v):g}"
    else:
        value = f"{text(mn, data)} × {text(mx, data)} / (warpSize × 2)"
    extra = ""
    if len(parts) > 2:
        extra = f"; the third argument `{text(parts[2], data)}` (CUDA's maximum blocks per cluster) has no HIP counterpart"
    return {"MAX": capture(mx, data), "MIN": capture(mn, data), "VALUE": capture(mn, data, value),
            "EXTRA": capture(node, data, extra)}


@fix_builder("launch-bounds-waves")
def launch_bounds_waves(match, ctx, rule):
    parts = _launch_bounds_args(match.node)
    a, b = int_value(parts[0], ctx.data), int_value(parts[1], ctx.data)
    if a is None or b is None or len(parts) > 2:
        return None
    from fractions import Fraction

    v = Fraction(b * a, WAVE64 * 2)
    if v.denominator != 1 or v < 1:
        return None
    return BuiltFix([Edit(parts[1].start_byte, parts[1].end_byte, str(v.numerator))],
                    description=f"Minimum waves per EU for 64-lane wavefronts: {v.numerator}")


# ---------------------------------------------------------------- texture references


@predicate("texture-reference", requires=("texture",))
def texture_reference(node, env, ctx, args):
    """A declaration whose type is the (unqualified) `texture<...>` template. Adds $NAME."""
    typ = node.child_by_field_name("type")
    if typ is None or typ.type != "template_type":
        return False
    if text(typ.child_by_field_name("name"), ctx.data) != "texture":
        return False
    names = [text(d, ctx.data) for d in node.children_by_field_name("declarator")]
    return {"NAME": capture(node, ctx.data, ", ".join(names) or "texture")}


# ---------------------------------------------------------------- __CUDA_ARCH__

CONDITION_KINDS = frozenset({"preproc_if", "preproc_elif"})
DEVICE_PASS = "__HIP_DEVICE_COMPILE__"
# the __CUDA_ARCH__ values of the GPUs CUDA 12 compiles for (nvcc's GPU feature list: sm_50 ... sm_120)
CUDA_ARCHS = (500, 520, 530, 600, 610, 620, 700, 720, 750, 800, 860, 870, 890, 900, 1000, 1010, 1200)


def _arch_matters(cond: ts.Node, data: bytes) -> bool:
    """Whether hip-clang (no `__CUDA_ARCH__`) takes another branch than nvcc's device pass for
    some architecture: `defined(__NVCC__) && !defined(__CUDA_ARCH__)` is false under hip-clang
    whatever the architecture, `!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 200` true on every
    one. Unknown project macros: it may matter."""
    if cond.type not in _CONDITION_EXPRESSIONS:
        return True  # `#ifdef __CUDA_ARCH__`
    from ..lang.cxx.preprocessor.directives import truth
    from ..lang.cxx.preprocessor.macros import HIP_CLANG, with_cuda_arch

    directive = cond.parent
    on_amd = truth(directive, data, with_cuda_arch(HIP_CLANG, None))
    if on_amd is None:
        return True
    return any(truth(directive, data, with_cuda_arch(HIP_CLANG, arch)) != on_amd for arch in CUDA_ARCHS)


_CONDITION_EXPRESSIONS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression",
                                    "preproc_defined", "identifier"})


def _arch_condition(node: ts.Node) -> ts.Node | None:
    """The preprocessor condition (or `#ifdef` name) that contains `node`."""
    cur, child = node.parent, node
    while cur is not None:
        if cur.type in ("preproc_ifdef", "preproc_elifdef"):
            return child if cur.child_by_field_name("name") == child else None
        if cur.type in CONDITION_KINDS:
            return child if cur.child_by_field_name("condition") == child else None
        if cur.type in ("compound_statement", "translation_unit", "function_definition", "declaration"):
            return None
        child, cur = cur, cur.parent
    return None


def _arch_uses(cond: ts.Node, data: bytes) -> list[ts.Node]:
    return [n for n in walk(cond) if n.type == "identifier" and text(n, data) == "__CUDA_ARCH__"]


def _is_presence_test(use: ts.Node, data: bytes) -> bool:
    """`defined(__CUDA_ARCH__)`, `#ifdef __CUDA_ARCH__`, or `__CUDA_ARCH__` as a truth value
    (alone, under `!`, `&&`, `||`) — tests that mean "device compilation pass"."""
    parent = use.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type in ("preproc_defined", "preproc_ifdef", "preproc_elifdef", "preproc_if", "preproc_elif"):
        return True
    if parent.type == "unary_expression" and text(parent.child_by_field_name("operator"), data) == "!":
        return True
    return parent.type == "binary_expression" and text(parent.child_by_field_name("operator"), data) in ("&&", "||")


@predicate("cuda-arch-condition")
def cuda_arch_condition(node, env, ctx, args):
    """`__CUDA_ARCH__` in a preprocessor condition (first use per condition) or elsewhere.
    Adds $COND and $ADVICE."""
    data = ctx.data
    cond = _arch_condition(node)
    if cond is None:
        return {"COND": capture(node, data, "`__CUDA_ARCH__`"),
                "ADVICE": capture(node, data, f"use `{DEVICE_PASS}` or a `__HIP_ARCH_HAS_*` feature macro")}
    uses = _arch_uses(cond, data)
    if uses and uses[0] != node:
        return False  # one finding per condition
    if cond.parent is not None and cond.parent.type in CONDITION_KINDS and not _arch_matters(cond, data):
        return False
    shown = " ".join(text(cond, data).split())
    if all(_is_presence_test(u, data) for u in uses):
        advice = f"hip-clang's device-pass macro is `{DEVICE_PASS}`"
    else:
        advice = (f"test `{DEVICE_PASS}` for device code and a `__HIP_ARCH_HAS_*` feature macro "
                  "(e.g. `__HIP_ARCH_HAS_WARP_SHUFFLE__`) instead of an architecture number")
    return {"COND": capture(cond, data, f"`{shown}`"), "ADVICE": capture(node, data, advice)}


@fix_builder("cuda-arch-to-hip-device-compile")
def cuda_arch_to_hip_device_compile(match, ctx, rule):
    data = ctx.data
    cond = _arch_condition(match.node)
    if cond is None:
        return None
    uses = _arch_uses(cond, data)
    if not all(_is_presence_test(u, data) for u in uses):
        return None  # architecture numbers: a feature macro must be chosen by hand
    return BuiltFix([Edit(u.start_byte, u.end_byte, DEVICE_PASS) for u in uses], effort="low",
                    description=f"Test `{DEVICE_PASS}`")


# ---------------------------------------------------------------- cudaMemoryType values

MEMORY_TYPE_ENUMS = frozenset({"cudaMemoryType", "hipMemoryType", "enum cudaMemoryType", "enum hipMemoryType"})
POINTER_ATTRIBUTES = frozenset({"cudaPointerAttributes", "hipPointerAttribute_t", "struct cudaPointerAttributes"})
MEMORY_TYPE_FIELDS = frozenset({"type", "memoryType"})
# CUDA's numbering (driver_types.h): what an integer meant in the CUDA source
CUDA_MEMORY_TYPES = {0: "cudaMemoryTypeUnregistered", 1: "cudaMemoryTypeHost", 2: "cudaMemoryTypeDevice",
                     3: "cudaMemoryTypeManaged"}
INTEGER_TYPES = re.compile(r"^(unsigned |signed )?(int|long|long long|short|char|size_t|u?int\d+_t)$")


def _memory_type_field(node: ts.Node | None, ctx) -> str | None:
    """'cuda' / 'hip' when `node` is `attr.type` / `p->memoryType` of pointer attributes."""
    data = ctx.data
    while node is not None and node.type == "parenthesized_expression":
        node = named(node)[0] if named(node) else None
    if node is None or node.type != "field_expression":
        return None
    if text(node.child_by_field_name("field"), data) not in MEMORY_TYPE_FIELDS:
        return None
    obj = node.child_by_field_name("argument")
    if obj.type == "identifier":
        found = find_declaration(node, text(obj, data), data)
        if found is not None:
            t = text(found[0], data)
            if t in POINTER_ATTRIBUTES:
                return "cuda" if "cuda" in t else "hip"
    if text(node.child_by_field_name("field"), data) == "memoryType":
        return "hip"  # HIP's field name; CUDA removed `memoryType` in CUDA 11
    return None


def _enum_cast(node: ts.Node, data: bytes) -> tuple[str, ts.Node] | None:
    """(enum type, value) of `(cudaMemoryType)v` / `static_cast<cudaMemoryType>(v)`."""
    if node.type == "cast_expression":
        t = text(node.child_by_field_name("type"), data)
        return (t, node.child_by_field_name("value")) if t in MEMORY_TYPE_ENUMS else None
    if node.type == "call_expression" and callee_name(node, data) in ("static_cast", "reinterpret_cast"):
        fn = node.child_by_field_name("function")
        targs = fn.child_by_field_name("arguments") if fn.type == "template_function" else None
        t = text(targs, data).strip("<> ") if targs is not None else ""
        a = call_args(node)
        return (t, a[0]) if t in MEMORY_TYPE_ENUMS and len(a) == 1 else None
    return None


@predicate("memory-type-integer", requires=("MemoryType", "memoryType", "PointerAttribute"))
def memory_type_integer(node, env, ctx, args):
    """An integer turned into a memory type (cast), a memory type turned into an integer, or a
    memory-type field compared with / switched on an integer literal. Adds $WHAT."""
    data = ctx.data
    what = None
    cast = _enum_cast(node, data)
    if cast is not None:
        what = f"`{' '.join(text(node, data).split())}` casts an integer to `{cast[0]}`"
    elif node.type == "cast_expression":
        t = text(node.child_by_field_name("type"), data)
        if INTEGER_TYPES.match(t) and _memory_type_field(node.child_by_field_name("value"), ctx):
            what = f"`{' '.join(text(node, data).split())}` turns a memory type into a number"
    elif node.type == "binary_expression" and text(node.child_by_field_name("operator"), data) in ("==", "!=", "<", ">", "<=", ">="):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        for field, lit in ((left, right), (right, left)):
            if int_value(lit, data) is not None and _memory_type_field(field, ctx):
                what = f"`{' '.join(text(node, data).split())}` compares a memory type with a number"
    elif node.type == "case_statement":
        value = node.child_by_field_name("value")
        switch = node.parent.parent if node.parent is not None else None
        if int_value(value, data) is not None and switch is not None and switch.type == "switch_statement":
            cond = switch.child_by_field_name("condition")
            inner = named(cond)[0] if cond is not None and named(cond) else None
            if _memory_type_field(inner, ctx):
                what = f"`case {text(value, data)}:` on a memory type"
    if what is None:
        return False
    return {"WHAT": capture(node, data, what)}


@fix_builder("memory-type-enumerator")
def memory_type_enumerator(match, ctx, rule):
    """Name the CUDA enumerator an integer meant, where the code is (still) CUDA."""
    data = ctx.data
    node = match.node
    cast = _enum_cast(node, data)
    if cast is not None:
        v = int_value(cast[1], data)
        if "cuda" in cast[0] and v in CUDA_MEMORY_TYPES:
            return BuiltFix([Edit(node.start_byte, node.end_byte, CUDA_MEMORY_TYPES[v])],
                            description=f"Use `{CUDA_MEMORY_TYPES[v]}`")
        return None
    if node.type == "binary_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        for field, lit in ((left, right), (right, left)):
            v = int_value(lit, data)
            if v in CUDA_MEMORY_TYPES and _memory_type_field(field, ctx) == "cuda" \
                    and text(node.child_by_field_name("operator"), data) in ("==", "!="):
                return BuiltFix([Edit(lit.start_byte, lit.end_byte, CUDA_MEMORY_TYPES[v])],
                                description=f"Use `{CUDA_MEMORY_TYPES[v]}`")
        return None
    if node.type == "case_statement":
        value = node.child_by_field_name("value")
        v = int_value(value, data)
        switch = node.parent.parent
        inner = named(switch.child_by_field_name("condition"))[0]
        if v in CUDA_MEMORY_TYPES and _memory_type_field(inner, ctx) == "cuda":
            return BuiltFix([Edit(value.start_byte, value.end_byte, CUDA_MEMORY_TYPES[v])],
                            description=f"Use `{CUDA_MEMORY_TYPES[v]}`")
    return None
