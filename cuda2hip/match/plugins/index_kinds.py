"""What a per-thread value counts, where its thread dependence is not a count of threads.

HIP405 reads `E % 32`, `E / 32`, `E >> 5` of a per-thread `E` as lane and warp ids. Two kinds of
per-thread values are not thread counts, so 32 there is no warp size:

- element indices: the thread index scaled by a constant (`i0 = 4 * (blockDim.x * blockIdx.y +
  threadIdx.x)`: four values a thread, ggml's quantize.cu), and what `%`, `+`, `-` make of them;
- data bits: a value whose only per-thread part is a shift count (`qh = load(...) >> (4 * kqsx)`:
  the bits a thread picks from a word, ggml's mmq-load-tiles.cuh), and its shifts and masks.

Variables are followed through their assigned values (all of them must be of the kind).
"""

from __future__ import annotations

import tree_sitter as ts

from .cuda_ast import int_value, named, text

_DEPTH = 8
SHIFTS = frozenset({"<<", ">>"})
BITWISE = frozenset({"&", "|", "^", "<<", ">>"})


def _strip(node: ts.Node) -> ts.Node:
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else \
            (named(node)[0] if len(named(node)) == 1 else None)
        if inner is None:
            break
        node = inner
    return node


def _variable(node: ts.Node, taint, data: bytes, kind, depth: int) -> bool | None:
    """For an identifier: whether every value of the variable is of `kind`; None if not a variable."""
    if node.type != "identifier":
        return None
    values = taint.values(node)
    return bool(values) and all(kind(v, taint, data, depth + 1) for v in values)


def _operands(node: ts.Node) -> tuple[ts.Node | None, ts.Node | None]:
    return node.child_by_field_name("left"), node.child_by_field_name("right")


def element_index(node: ts.Node | None, taint, data: bytes, depth: int = 0) -> bool:
    """`node` is per-thread only through a thread index scaled by a constant other than 1."""
    if node is None or depth > _DEPTH:
        return False
    node = _strip(node)
    got = _variable(node, taint, data, element_index, depth)
    if got is not None:
        return got
    if node.type != "binary_expression":
        return False
    op = text(node.child_by_field_name("operator"), data)
    left, right = _operands(node)
    if left is None or right is None:
        return False
    if op == "*":
        for side, factor in ((left, right), (right, left)):
            scale = int_value(factor, data)
            if scale is not None and scale not in (0, 1) and taint.depends(side):
                return True
    if op == "<<" and (int_value(right, data) or 0) > 0 and not taint.depends(right):
        return taint.depends(left)
    if op in ("%", "+", "-", "*", "<<"):
        dependent = [s for s in (left, right) if taint.depends(s)]
        return bool(dependent) and all(element_index(s, taint, data, depth + 1) for s in dependent)
    return False


def data_bits(node: ts.Node | None, taint, data: bytes, depth: int = 0) -> bool:
    """`node` is per-thread only through shift counts: bits a thread selects from a value."""
    if node is None or depth > _DEPTH:
        return False
    node = _strip(node)
    got = _variable(node, taint, data, data_bits, depth)
    if got is not None:
        return got
    if node.type != "binary_expression":
        return False
    op = text(node.child_by_field_name("operator"), data)
    left, right = _operands(node)
    if left is None or right is None or op not in BITWISE:
        return False
    if op in SHIFTS and not taint.depends(left):
        return taint.depends(right)
    dependent = [s for s in ((left,) if op in SHIFTS else (left, right)) if taint.depends(s)]
    return bool(dependent) and all(data_bits(s, taint, data, depth + 1) for s in dependent)


def not_a_thread_count(node: ts.Node | None, taint, data: bytes) -> bool:
    return element_index(node, taint, data) or data_bits(node, taint, data)
