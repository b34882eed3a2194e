"""Hard-coded warp size 32 (HIP405): only where 32 counts the lanes of a warp.

Fires on lane and warp ids derived from thread indices (`tid % 32`, `tid & 31`, `tid / 32`,
`tid >> 5`, `blockDim.x / 32`), shuffle offsets and widths, shuffle loops, ballot widths (a
loop over 32 bits of a ballot, `__popc(ballot) == 32`), the last lane `lane == 31`, loops that
step over a warp from a lane id, and constants named like the warp size. Quiet where 32 is
something else: the width of a 32-bit word (`1u << (pos % 32)`, `bits[pos / 32]` of a global
index), a tile dimension (`t[threadIdx.y][si % 32]` of a `[128][32]` tile), and per-warp arrays
`[32]` (32 slots hold every warp of a 1024-thread block on any GPU), element indices and data
bits (index_kinds.py), and permutations within groups of 32 (`(i & ~31) | (f(i) & 31)`).
"""

from __future__ import annotations

import re

import tree_sitter as ts

from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.index_kinds import not_a_thread_count
from ...lang.cxx.syntax import (call_args, callee_name, declarator_name, enclosing_function, file_scope_declaration,
                                find_declaration, function_body, int_value, named, text, walk)
from ...lang.cxx.thread_taint import thread_taint
from ...lang.lazy_regex import LazyRegex
from .intrinsics import ballot_variable, is_ballot

WARP_NAME = re.compile(r"warp_?size|warpsz|wavefront_?size|wave_?size", re.IGNORECASE)
LANE_NAME = LazyRegex(r"warp|lane|wid\b|wave", re.IGNORECASE)
SHUFFLES = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_sync", "__shfl_up_sync",
                      "__shfl_down_sync", "__shfl_xor_sync"})
# shuffles whose second value argument is an offset (not a source lane)
SHIFTING_SHUFFLES = frozenset({"__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_up_sync", "__shfl_down_sync",
                               "__shfl_xor_sync"})
POPCOUNTS = frozenset({"__popc", "__popcll"})
# operator -> the literal that means "warp size 32" with it
LANE_ARITH = {"%": 32, "/": 32, "&": 31, ">>": 5}
LANE_OF = frozenset({"%", "&"})  # the lane within a warp (the others give the warp)
SHIFTS = frozenset({"<<", ">>", "<<=", ">>="})
COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
# the node kinds cuda_ast.int_value can give a value for
_INT_VALUE_KINDS = frozenset({"number_literal", "parenthesized_expression"})


def _squash(node: ts.Node, data: bytes) -> str:
    return " ".join(text(node, data).split())


def _outer(node: ts.Node) -> tuple[ts.Node, ts.Node | None]:
    """`node` with the parentheses around it, and the node that uses it."""
    while node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    return node, node.parent


def _is_shift_count(node: ts.Node, data: bytes) -> bool:
    """`1u << (pos % 32)`: the bit position in a 32-bit word."""
    node, parent = _outer(node)
    return (parent is not None and parent.type in ("binary_expression", "assignment_expression")
            and parent.child_by_field_name("right") == node
            and text(parent.child_by_field_name("operator"), data) in SHIFTS)


def _assigned(node: ts.Node, data: bytes) -> ts.Node | None:
    """The variable `node` is stored in (`int lane = E;`, `lane = E;`), as its declarator name."""
    node, parent = _outer(node)
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
        d = parent.child_by_field_name("declarator")
        while d is not None and d.type != "identifier":
            d = d.child_by_field_name("declarator")
        return d
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        left = parent.child_by_field_name("left")
        return left if left is not None and left.type == "identifier" else None
    return None


def _array_dimensions(array: ts.Node, ctx) -> list[int | None] | None:
    """Dimensions of the array `array` names, outermost first (`t[128][32]` -> [128, 32])."""
    if array.type != "identifier":
        return None
    name = text(array, ctx.data)
    found = find_declaration(array, name, ctx.data) or file_scope_declaration(ctx, name)
    if found is None:
        return None
    for d in found[1].children_by_field_name("declarator"):
        d = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        dims = []
        while d is not None and d.type == "array_declarator":
            dims.append(int_value(d.child_by_field_name("size"), ctx.data))
            d = d.child_by_field_name("declarator")
        if d is not None and text(d, ctx.data) == name and dims:
            return dims[::-1]
    return None


def _tile_dimension(index: ts.Node, ctx) -> bool:
    """`index` subscripts a 32-wide dimension of a multi-dimensional array (a tile column)."""
    index, parent = _outer(index)
    if parent is not None and parent.type == "subscript_argument_list":
        parent = parent.parent
    if parent is None or parent.type != "subscript_expression":
        return False
    depth, array = 0, parent
    while array.type == "subscript_expression":  # t[a][b]: b is the innermost dimension
        array = array.child_by_field_name("argument")
        depth += 1
    dims = _array_dimensions(array, ctx)
    if dims is None or len(dims) < 2:
        return False
    inner = parent
    position = depth - 1
    while inner.parent is not None and inner.parent.type == "subscript_expression" \
            and inner.parent.child_by_field_name("argument") == inner:
        inner = inner.parent
        position -= 1
    return 0 <= position < len(dims) and dims[position] == 32


def _variable_uses(var: ts.Node, ctx) -> list[ts.Node]:
    taint = thread_taint(var, ctx)
    fn = enclosing_function(var)
    body = function_body(fn) if fn is not None else None
    if taint is None or body is None:
        return []
    target = taint.resolve(var)
    name = text(var, ctx.data)
    return [n for n in taint.identifiers_in(body) if n.type == "identifier" and n.start_byte != var.start_byte
            and text(n, ctx.data) == name and taint.resolve(n) == target]


def _not_a_lane(node: ts.Node, ctx) -> bool:
    """`node` (`E % 32`, `E & 31`) is a bit position of a 32-bit word or a tile column."""
    if _is_shift_count(node, ctx.data) or _tile_dimension(node, ctx):
        return True
    var = _assigned(node, ctx.data)
    return var is not None and any(_is_shift_count(u, ctx.data) or _tile_dimension(u, ctx)
                                   for u in _variable_uses(var, ctx))


def _regrouped(node: ts.Node, data: bytes) -> bool:
    """`(i & 0xFFFFFFE0) | (f(i) & 0x1F)`: a permutation within groups of 32 (shared-memory banks,
    the samples' dct8x8); the low 5 bits are put back with the group, so the value stays a
    block-wide index."""
    node, parent = _outer(node)
    if parent is None or parent.type != "binary_expression" or text(parent.child_by_field_name("operator"), data) \
            not in ("|", "+"):
        return False
    other = parent.child_by_field_name("left" if parent.child_by_field_name("right") == node else "right")
    while other is not None and other.type == "parenthesized_expression" and len(named(other)) == 1:
        other = named(other)[0]
    if other is None or other.type != "binary_expression" or text(other.child_by_field_name("operator"), data) != "&":
        return False
    masks = [_mask_value(other.child_by_field_name(f), data) for f in ("left", "right")]
    return any(m is not None and m != 0 and m & 31 == 0 for m in masks)


def _mask_value(node: ts.Node | None, data: bytes) -> int | None:
    """`0xFFFFFFE0`, `~31`, `~0x1Fu`: the value of a literal mask."""
    if node is not None and node.type == "unary_expression" and text(node.child_by_field_name("operator"), data) == "~":
        inner = int_value(node.child_by_field_name("argument"), data)
        return None if inner is None else ~inner & 0xFFFFFFFFFFFFFFFF
    return int_value(node, data)


def _word_companion(node: ts.Node, left: ts.Node, ctx) -> bool:
    """`E / 32` next to an `E % 32` that is a bit position or tile column: `bits[E / 32] |= 1u
    << (E % 32)`, `t[E / 32][E % 32]`."""
    fn = enclosing_function(node)
    body = function_body(fn) if fn is not None else None
    if body is None:
        return False
    data = ctx.data
    want = _squash(left, data)
    for n in walk(body):
        if n.type == "binary_expression" and _lane_operator(n, data) in LANE_OF \
                and _squash(n.child_by_field_name("left"), data) == want and _not_a_lane(n, ctx):
            return True
    return False


def _lane_operator(node: ts.Node, data: bytes) -> str | None:
    """The operator of `E % 32` / `E & 31` / `E / 32` / `E >> 5`, else None."""
    right = node.child_by_field_name("right")
    if right is None or right.type not in _INT_VALUE_KINDS:
        return None  # int_value(right) is None: no operator compares equal (most expressions)
    op = text(node.child_by_field_name("operator"), data)
    return op if op in LANE_ARITH and int_value(right, data) == LANE_ARITH[op] else None


def _lane_arith(node: ts.Node, ctx) -> str | None:
    data = ctx.data
    op = _lane_operator(node, data)
    if op is None:
        return None
    taint = thread_taint(node, ctx)
    if taint is None:
        return None
    left = node.child_by_field_name("left")
    per_thread = taint.depends(left)
    block_size = op in ("/", ">>") and not per_thread and "blockDim" in taint.builtins(left)
    if not (per_thread or block_size):
        return None
    what = f"`{_squash(node, data)}`"
    var = _assigned(node, data)
    if var is not None and LANE_NAME.search(text(var, data)):
        return what  # `int lane = ...`, `warp_id = ...`: says what it is
    if per_thread and not_a_thread_count(left, taint, data):
        return None
    if op in LANE_OF:
        return None if _not_a_lane(node, ctx) or _regrouped(node, data) else what
    if per_thread and taint.builtins(left) & {"blockIdx", "gridDim"}:
        return None  # a grid-wide index: `pos / 32` is a word of a bitmap, not a warp
    return None if _word_companion(node, left, ctx) else what


def _literal_argument(arguments: list[ts.Node], index: int, data: bytes) -> int | None:
    return int_value(arguments[index], data) if index < len(arguments) else None


def _shuffle_call(node: ts.Node, ctx) -> str | None:
    """`__shfl_down_sync(m, v, 16)`: the first step of a 32-lane reduction; `..., 32)`: width."""
    data = ctx.data
    name = callee_name(node, data)
    if name not in SHUFFLES:
        return None
    arguments = call_args(node)
    first = 2 if name.endswith("_sync") else 1  # the lane / offset argument
    parts = []
    if name in SHIFTING_SHUFFLES and _literal_argument(arguments, first, data) == 16:
        parts.append("offset 16")
    if _literal_argument(arguments, first + 1, data) == 32:
        parts.append("width 32")
    return f"`{name}` with {' and '.join(parts)}" if parts else None


def _loop_variable(node: ts.Node, data: bytes) -> tuple[str | None, ts.Node | None]:
    init = node.child_by_field_name("initializer")
    if init is not None and init.type == "declaration":
        d = init.child_by_field_name("declarator")
        if d is not None and d.type == "init_declarator":
            return declarator_name(d, data), d.child_by_field_name("value")
    elif init is not None and init.type == "assignment_expression":
        return text(init.child_by_field_name("left"), data), init.child_by_field_name("right")
    return None, None


def _bound(node: ts.Node, data: bytes) -> int | None:
    cond = node.child_by_field_name("condition")
    return int_value(cond.child_by_field_name("right"), data) if cond is not None and cond.type == "binary_expression" else None


def _uses(body: ts.Node | None, var: str, data: bytes) -> bool:
    return body is not None and any(x.type == "identifier" and text(x, data) == var for x in walk(body))


def _shuffle_loop(node: ts.Node, ctx) -> str | None:
    data = ctx.data
    var, value = _loop_variable(node, data)
    start, bound = int_value(value, data), _bound(node, data)
    if var is None or (start != 16 and bound != 32):
        return None
    body = node.child_by_field_name("body")
    for n in walk(body) if body is not None else ():
        if n.type == "call_expression" and callee_name(n, data) in SHUFFLES \
                and any(_uses(a, var, data) for a in call_args(n)):
            what = f"offset {start}" if start == 16 else "bound 32"
            init = node.child_by_field_name("initializer")
            return f"a shuffle loop with {what} (`{_squash(init, data).rstrip(';')}`)"
    return None


def _ballot_bits_loop(node: ts.Node, ctx) -> str | None:
    """`for (i = 0; i < 32; ++i) if (ballot & (1u << i))`: a ballot has 64 bits on CDNA."""
    data = ctx.data
    var, _ = _loop_variable(node, data)
    body = node.child_by_field_name("body")
    if var is None or _bound(node, data) != 32 or body is None:
        return None
    for n in walk(body):
        if n.type == "binary_expression" and text(n.child_by_field_name("operator"), data) in ("&", ">>"):
            sides = [n.child_by_field_name("left"), n.child_by_field_name("right")]
            ballot = next((s for s in sides if is_ballot(s, data) or ballot_variable(s, ctx) is not None), None)
            if ballot is not None and any(_uses(s, var, data) for s in sides if s != ballot):
                return f"a loop over 32 bits of the ballot `{_squash(ballot, data)}`"
    return None


def _warp_stride_loop(node: ts.Node, ctx) -> str | None:
    """`for (i = lane; i < n; i += 32)`: steps over the lanes of a warp."""
    data = ctx.data
    update = node.child_by_field_name("update")
    var, value = _loop_variable(node, data)
    if var is None or value is None or update is None or update.type != "assignment_expression" \
            or text(update.child_by_field_name("operator"), data) != "+=" \
            or int_value(update.child_by_field_name("right"), data) != 32:
        return None
    taint = thread_taint(node, ctx)
    if taint is None or not taint.depends(value):
        return None
    lane_like = any(LANE_NAME.search(text(x, data)) for x in walk(value) if x.type == "identifier") \
        or any(n.type == "binary_expression" and _lane_operator(n, data) in LANE_OF for n in walk(value))
    return f"a loop stepping over a warp (`{var} += 32` from `{_squash(value, data)}`)" if lane_like else None


def _ballot_width(node: ts.Node, ctx) -> str | None:
    """`__popc(ballot) == 32`, `lane == 31`: 32 lanes counted as the whole warp."""
    data = ctx.data
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or "number_literal" not in (left.type, right.type) \
            or text(node.child_by_field_name("operator"), data) not in COMPARISONS:
        return None
    for side, other in ((left, right), (right, left)):
        value = int_value(other, data)
        if value == 32 and side.type == "call_expression" and callee_name(side, data) in POPCOUNTS:
            arguments = call_args(side)
            if arguments and (is_ballot(arguments[0], data) or ballot_variable(arguments[0], ctx) is not None):
                return f"`{_squash(node, data)}` (a full warp counted as 32 lanes)"
        if value == 31 and side.type == "identifier" and re.search("lane", text(side, data), re.IGNORECASE):
            taint = thread_taint(node, ctx)
            if taint is not None and taint.depends(side):
                return f"`{_squash(node, data)}` (the last lane taken as 31)"
    return None


def _warp_constant(node: ts.Node, ctx) -> str | None:
    data = ctx.data
    if node.type == "preproc_def":
        name = text(node.child_by_field_name("name"), data)
        value = node.child_by_field_name("value")
        if WARP_NAME.search(name) and value is not None and text(value, data).strip().strip("()").rstrip("uU") == "32":
            return f"`#define {name} 32`"
        return None
    for d in node.children_by_field_name("declarator"):
        if d.type == "init_declarator":
            name = declarator_name(d, data)
            if name and WARP_NAME.search(name) and int_value(d.child_by_field_name("value"), data) == 32:
                return f"`{name} = 32`"
    return None


@predicate("hard-coded-warp-size")
def hard_coded_warp_size(node, env, ctx, args):
    """Warp size 32 written into the code where it counts the lanes of a warp. Adds $WHAT."""
    if node.type == "binary_expression":
        what = _lane_arith(node, ctx) or _ballot_width(node, ctx)
    elif node.type == "call_expression":
        what = _shuffle_call(node, ctx)
    elif node.type == "for_statement":
        what = _shuffle_loop(node, ctx) or _ballot_bits_loop(node, ctx) or _warp_stride_loop(node, ctx)
    elif node.type in ("preproc_def", "declaration"):
        what = _warp_constant(node, ctx)
    else:
        what = None
    if what is None:
        return False
    return {"WHAT": capture(node, ctx.data, what)}
