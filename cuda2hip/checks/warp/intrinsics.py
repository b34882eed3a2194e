"""Warp intrinsics on 64-lane wavefronts: 32-bit masks of the `_sync` functions (HIP402),
`_sync` functions the targeted ROCm lacks (HIP403) and the HIP meaning of the legacy intrinsics
(HIP406); ballots truncated to 32 bits (HIP404) are ballots.py's."""

from __future__ import annotations

import re

import tree_sitter as ts

from ...api.tables import version_tuple
from ...api.warp import MASKED
from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import (call_args, callee_name, declarator_name, file_scope_declaration, find_declaration,
                                int_value, literal_suffix, named, text, type_text, walk)
from .lanes import BALLOTS, BIT_FUNCTIONS, TYPES_32, TYPES_64, is_ballot, strip_type

# `_sync` function -> the HIP builtin without a mask that does the same for a full mask
LEGACY_EQUIVALENT = {
    "__shfl_sync": "__shfl", "__shfl_up_sync": "__shfl_up", "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor", "__ballot_sync": "__ballot", "__any_sync": "__any", "__all_sync": "__all",
}
WARP_SYNC_OPT_IN = version_tuple("6.2")  # -DHIP_ENABLE_WARP_SYNC_BUILTINS
WARP_SYNC_DEFAULT = version_tuple("7.0")
FULL_MASK_64 = "0xffffffffffffffffull"
# Not behind -DHIP_ENABLE_WARP_SYNC_BUILTINS in ROCm 6.2-6.4 (amd_warp_sync_functions.h of 6.4
# declares only the shuffles, votes, ballots, matches and, in amd_warp_functions.h,
# __activemask): absent from every 6.x release.
NOT_IN_ROCM_6 = frozenset({"__syncwarp", "__uni_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                           "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"})
# ... of which ROCm 7.x declares these
IN_ROCM_7 = NOT_IN_ROCM_6 - {"__uni_sync"}




def _target(ctx) -> tuple[int, ...]:
    return version_tuple(ctx.settings.target_rocm)


class Mask:
    """What is known about a mask expression."""

    def __init__(self, bits: int | None, full: bool = False, how: str = "", fix: tuple[int, int, str] | None = None):
        self.bits = bits  # 32, 64 or None (unknown)
        self.full = full  # all lanes
        self.how = how  # why it is 32-bit, for the message
        self.fix = fix  # (start, end, replacement) turning it into a 64-bit full mask


def classify_mask(node: ts.Node, ctx, *, depth: int = 0) -> Mask:
    data = ctx.data
    if node.type == "parenthesized_expression" and len(named(node)) == 1:
        inner = classify_mask(named(node)[0], ctx, depth=depth)
        if inner.fix and inner.full:
            inner.fix = (node.start_byte, node.end_byte, FULL_MASK_64)
        return inner
    if node.type == "number_literal":
        v = int_value(node, data)
        if v is None or v < -1:
            return Mask(None)
        if "ll" in literal_suffix(node, data) or v > 0xFFFFFFFF:
            return Mask(64, v in (-1, (1 << 64) - 1))
        full = v in (-1, 0xFFFFFFFF)
        return Mask(32, full, "a 32-bit literal", (node.start_byte, node.end_byte, FULL_MASK_64) if full else None)
    if node.type == "unary_expression":
        op = text(node.child_by_field_name("operator"), data)
        arg = node.child_by_field_name("argument")
        v = int_value(arg, data)
        if v is None:
            return Mask(None)
        wide = "ll" in literal_suffix(arg, data) if arg.type == "number_literal" else False
        full = (op == "-" and v == 1) or (op == "~" and v == 0)
        if wide:
            return Mask(64, full)
        return Mask(32, full, "a 32-bit `int` / `unsigned` expression",
                    (node.start_byte, node.end_byte, FULL_MASK_64) if full else None)
    if node.type == "cast_expression":
        t = strip_type(text(node.child_by_field_name("type"), data))
        if t in TYPES_64:
            return Mask(64)
        if t in TYPES_32:
            inner = classify_mask(node.child_by_field_name("value"), ctx, depth=depth)
            full = inner.full or int_value(node.child_by_field_name("value"), data) == 0xFFFFFFFF
            return Mask(32, full, f"cast to `{t}`", (node.start_byte, node.end_byte, FULL_MASK_64) if full else None)
        return Mask(None)
    if node.type == "call_expression":
        name = callee_name(node, data)
        if name in BALLOTS:
            return Mask(64, name == "__activemask")  # HIP: 64-bit unsigned long long
        return Mask(None)
    if node.type == "identifier" and depth < 3:
        name = text(node, data)
        found = find_declaration(node, name, data) or file_scope_declaration(ctx, name)
        if found is not None:
            typ, decl = found
            t = strip_type(type_text(decl, typ, data))
            if t in TYPES_32:
                return Mask(32, False, f"`{name}` is declared `{t}`")
            if t in TYPES_64:
                return Mask(64)
            if t == "auto" and decl.type == "declaration":
                for d in decl.children_by_field_name("declarator"):
                    if declarator_name(d, data) == name and d.child_by_field_name("value") is not None:
                        inner = classify_mask(d.child_by_field_name("value"), ctx, depth=depth + 1)
                        return Mask(inner.bits, inner.full, f"`{name}` is `auto` from {inner.how}" if inner.how else "")
            return Mask(None)
        return _macro_mask(ctx, name)
    return Mask(None)


_DEFINE = r"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+(\(?\s*(0[xX][0-9a-fA-F]+|[0-9]+|~0|-1)([uUlL]*)\s*\)?)[ \t]*(//.*|/\*.*)?$"


def _macro_mask(ctx, name: str) -> Mask:
    """An object-like `#define NAME <integer literal>` of this file or of a project header it
    includes (whose definition this file cannot fix)."""
    data = ctx.file_context.data
    pattern = re.compile(_DEFINE.format(name=re.escape(name)).encode(), re.MULTILINE)
    m = pattern.search(data)
    where = ""
    if m is None:
        found = _header_define(ctx, name, pattern)
        if found is None:
            return Mask(None)
        where, m = found
    lit, digits, suffix = m.group(1).decode(), m.group(2).decode(), m.group(3).decode().lower()
    if digits in ("~0", "-1"):
        value = None  # all bits of the literal's type
    elif digits.lower().startswith("0x"):
        value = int(digits, 16)
    else:
        value = int(digits, 8) if len(digits) > 1 and digits.startswith("0") else int(digits)
    if "ll" in suffix or (value is not None and value > 0xFFFFFFFF):
        return Mask(64, value is None or value == (1 << 64) - 1)
    full = value is None or value == 0xFFFFFFFF
    fix = None
    if full and not ctx.is_fragment and not where and _only_masks(ctx, name, m):
        fix = (m.start(1), m.start(1) + len(m.group(1).rstrip()), FULL_MASK_64)
    return Mask(32, full, f"`{name}` is defined as `{lit.strip()}`{where}", fix)


def _header_define(ctx, name: str, pattern: re.Pattern) -> tuple[str, re.Match] | None:
    """(" in `header`", match) of the definition in a project header the file includes."""
    from ...lang.cxx.includes import local_header
    from ...lang.cxx.preprocessor.layout import scan

    root, seen = ctx.settings.root, set()
    todo = [(ctx.path, ctx.file_context.data, 0)]
    while todo:
        path, data, depth = todo.pop(0)
        for inc in scan(data).includes:
            if not inc.quoted or depth > 8:
                continue
            got = local_header(path, inc.header, root)
            if got is None or got[0] in seen:
                continue
            seen.add(got[0])
            m = pattern.search(got[1])
            if m is not None:
                return f" in `{inc.header}`", m
            todo.append((got[0], got[1], depth + 1))
    return None


def _only_masks(ctx, name: str, define: re.Match) -> bool:
    """Every other use of the macro in the file is the mask argument of a `_sync` function (so a
    64-bit value changes nothing else)."""
    key = f"warp:only-masks:{name}"
    cache = ctx.file_cache
    if key not in cache:
        fc = ctx.file_context
        data, root = fc.data, fc.tree.root_node
        ok = True
        for use in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\b", data):
            if define.start() <= use.start() < define.end():
                continue
            node = root.descendant_for_byte_range(use.start(), use.end())
            if node is None or node.type != "identifier" or not _is_mask_argument(node, data):
                ok = False
                break
        cache[key] = ok
    return cache[key]


def _is_mask_argument(node: ts.Node, data: bytes) -> bool:
    args = node.parent
    if args is None or args.type != "argument_list" or not named(args) or named(args)[0] != node:
        return False
    call = args.parent
    return call is not None and call.type == "call_expression" and callee_name(call, data) in MASKED


@predicate("warp-sync-mask-32-bit", callees=MASKED)
def warp_sync_mask_32_bit(node, env, ctx, args):
    """A `_sync` warp function / `__syncwarp` whose mask is 32 bits wide, when the target has
    the `_sync` functions (6.2 and later). Adds $FN, $MASK, $HOW."""
    name = callee_name(node, ctx.data)
    if name not in MASKED:
        return False
    if _target(ctx) < WARP_SYNC_OPT_IN:
        return False  # HIP403 reports that the functions do not exist there
    arguments = call_args(node)
    if not arguments:
        return False
    mask = classify_mask(arguments[0], ctx)
    if mask.bits != 32:
        return False
    return {"FN": capture(node.child_by_field_name("function"), ctx.data), "MASK": capture(arguments[0], ctx.data),
            "HOW": capture(arguments[0], ctx.data, mask.how)}


@fix_builder("warp-sync-mask-64-bit")
def warp_sync_mask_64_bit(match, ctx, rule):
    arg = call_args(match.node)[0]
    mask = classify_mask(arg, ctx)
    widened = _widen_ballot_variable(arg, ctx)
    if widened is not None:
        return widened
    if not mask.full or mask.fix is None:
        # a partial mask or a mask variable: which lanes it means on a 64-lane wavefront is a
        # design question
        return BuiltFix(None, effort="medium")
    start, end, new = mask.fix
    return BuiltFix([Edit(start, end, new)], description=f"Use the 64-bit full mask `{new}`")


def _widen_ballot_variable(arg: ts.Node, ctx) -> BuiltFix | None:
    """`unsigned m = __activemask();` (or a `__ballot_sync`) used only as masks and by the bit
    functions: the variable becomes `unsigned long long`, which keeps every lane HIP's ballot
    returns (a 32-bit one dropped lanes 32-63 and fails the `static_assert`)."""
    if arg.type != "identifier" or ctx.is_fragment:
        return None
    data = ctx.data
    name = text(arg, data)
    found = find_declaration(arg, name, data)
    if found is None:
        return None
    typ, decl = found
    declarators = decl.children_by_field_name("declarator")
    if decl.type != "declaration" or len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    d = declarators[0]
    if declarator_name(d, data) != name or d.child_by_field_name("declarator").type != "identifier" \
            or not is_ballot(d.child_by_field_name("value"), data):
        return None
    if strip_type(type_text(decl, typ, data)) not in TYPES_32 or any(
            c.type == "storage_class_specifier" for c in decl.children):
        return None
    scope = decl.parent
    for n in walk(scope):
        if n.type != "identifier" or text(n, data) != name or n.start_byte < decl.end_byte:
            continue
        if _is_mask_argument(n, data):
            continue
        parent = n.parent
        call = parent.parent if parent is not None and parent.type == "argument_list" else None
        if call is not None and len(named(parent)) == 1 and callee_name(call, data) in BIT_FUNCTIONS:
            continue  # __popc / __ffs: HIP404 makes them 64-bit
        return None
    return BuiltFix([Edit(typ.start_byte, typ.end_byte, "unsigned long long")],
                    description="Store the mask in `unsigned long long` (HIP's ballot type; used only as a mask)")


# ---------------------------------------------------------------- availability by ROCm version


@predicate("warp-sync-unavailable", callees=MASKED | {"__activemask"})
def warp_sync_unavailable(node, env, ctx, args):
    """A `_sync` warp function / `__syncwarp` / `__activemask` that the targeted ROCm does not
    declare by default (a target below 7.0). Adds $FN and $WHY."""
    name = callee_name(node, ctx.data)
    if name not in MASKED and name != "__activemask":
        return False
    if node.child_by_field_name("function").type != "identifier":
        return False
    target = _target(ctx)
    if target >= WARP_SYNC_DEFAULT:
        return False
    t = ctx.settings.target_rocm
    if name in NOT_IN_ROCM_6:
        why = (f"ROCm {t} does not declare `{name}`: no ROCm 6.x does, not even with "
               "-DHIP_ENABLE_WARP_SYNC_BUILTINS" + (" (ROCm 7.x declares it)" if name in IN_ROCM_7 else ""))
    elif target < WARP_SYNC_OPT_IN:
        why = (f"ROCm {t} has no `_sync` warp functions (HIP declares them from ROCm 6.2 with "
               "-DHIP_ENABLE_WARP_SYNC_BUILTINS, by default from ROCm 7.0)")
    else:
        why = (f"ROCm {t} declares `{name}` only when compiled with -DHIP_ENABLE_WARP_SYNC_BUILTINS "
               "(by default from ROCm 7.0)")
    return {"FN": capture(node.child_by_field_name("function"), ctx.data, name), "WHY": capture(node, ctx.data, why)}


# ROCm 7.x's `__syncwarp()` (hip/amd_detail/amd_warp_sync_functions.h of 7.2): release and acquire
# fences at wavefront scope around the wave barrier; one expression, so that it stands where the call did
SYNCWARP_7 = ('(__builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront"), __builtin_amdgcn_wave_barrier(), '
              '__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront"))')


@fix_builder("warp-sync-to-legacy")
def warp_sync_to_legacy(match, ctx, rule):
    """Below ROCm 7.0, where the mask is the full (or active) mask: the maskless builtin the HIP
    `_sync` function itself calls for it, `__ballot(1)` for `__activemask()`, and ROCm 7's own
    definition for `__syncwarp`."""
    target = _target(ctx)
    node = match.node
    data = ctx.data
    name = callee_name(node, data)
    if target >= WARP_SYNC_DEFAULT:
        return None
    arguments = call_args(node)
    if name == "__activemask":
        return BuiltFix([Edit(node.start_byte, node.end_byte, "__ballot(1)")], applicability="safe",
                        description="`__ballot(1)`: the mask of the active lanes, as HIP's `__activemask()` computes it")
    if name == "__syncwarp":
        if arguments and not classify_mask(arguments[0], ctx).full:
            return BuiltFix(None, effort="medium")
        return BuiltFix([Edit(node.start_byte, node.end_byte, SYNCWARP_7)], applicability="safe",
                        description="ROCm 7's `__syncwarp()`: wavefront fences around the wave barrier")
    legacy = LEGACY_EQUIVALENT.get(name)
    if legacy is None or not arguments or not classify_mask(arguments[0], ctx).full:
        return BuiltFix(None, effort="medium")  # partial masks, __match_*/__reduce_*: port by hand
    rest = ", ".join(text(a, data) for a in arguments[1:])
    return BuiltFix([Edit(node.start_byte, node.end_byte, f"{legacy}({rest})")], applicability="safe",
                    description=f"Use `{legacy}`, which HIP's `{name}` runs for a full mask")


# ---------------------------------------------------------------- legacy (maskless) intrinsics

LEGACY_MEANING = {
    "__shfl": "reads a lane of the whole wavefront; `width` defaults to `warpSize` (64 on CDNA GPUs), not 32",
    "__shfl_up": "shifts across the whole wavefront; `width` defaults to `warpSize` (64 on CDNA GPUs), not 32",
    "__shfl_down": "shifts across the whole wavefront; `width` defaults to `warpSize` (64 on CDNA GPUs), not 32",
    "__shfl_xor": "exchanges across the whole wavefront; `width` defaults to `warpSize` (64 on CDNA GPUs), not 32",
    "__ballot": "returns a 64-bit `unsigned long long` with one bit per lane (also on wave32 GPUs)",
    "__any": "votes over the active lanes of the wavefront (64 lanes on CDNA GPUs)",
    "__all": "votes over the active lanes of the wavefront (64 lanes on CDNA GPUs)",
}


@predicate("legacy-warp-intrinsic", callees=set(LEGACY_MEANING))
def legacy_warp_intrinsic(node, env, ctx, args):
    """A call of a maskless warp intrinsic. Adds $NAME and $MEANING."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "identifier":
        return False
    name = text(fn, ctx.data)
    meaning = LEGACY_MEANING.get(name)
    if meaning is None:
        return False
    return {"NAME": capture(fn, ctx.data), "MEANING": capture(fn, ctx.data, meaning)}
