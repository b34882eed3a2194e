"""What a per-thread value counts, where its thread dependence is not a count of threads.

HIP405 reads `E % 32`, `E / 32`, `E >> 5` of a per-thread `E` as lane and warp ids. Two kinds of
per-thread values are not thread counts, so 32 there is no warp size:

- element indices: the thread index scaled by a constant (`i0 = 4 * (blockDim.x * blockIdx.y +
  threadIdx.x)`: four values a thread, ggml's quantize.cu), and what `%`, `+`, `-` make of them;
- data bits: values read from memory (`p[i]`, `*p`, `s->f`, a call given one), even at a per-thread
  address, and values whose only per-thread part is a shift count (`qh = get_int_b2(bxi->qh, 0) >>
  (4 * kqsx)`: the bits a thread picks from a word, ggml's mmq-load-tiles.cuh), and their shifts
  and masks.

Variables are followed through their assigned values (all of them must be of the kind).
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import int_value, named, text

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


def loaded(node: ts.Node, data: bytes) -> bool:
    """A value read from memory: `p[i]`, `*p`, `s->f`, `a[i].f`, or a call given one (`get_int_b2(bxi->qh, 0)`)."""
    node = _strip(node)
    if node.type == "subscript_expression":
        return True
    if node.type == "pointer_expression":
        return text(node.child_by_field_name("operator"), data) == "*"
    if node.type == "field_expression":  # `s->f`, `a[i].f` (not `threadIdx.x`)
        arg = node.child_by_field_name("argument")
        return text(node.child_by_field_name("operator"), data) == "->" or (arg is not None and loaded(arg, data))
    if node.type == "call_expression":
        args = node.child_by_field_name("arguments")
        return args is not None and any(loaded(_address_of(a, data), data) for a in named(args) if a.type != "comment")
    return False


def _address_of(node: ts.Node, data: bytes) -> ts.Node:
    """`&s->f` -> `s->f`: a call given the address of memory reads it."""
    if node.type == "pointer_expression" and text(node.child_by_field_name("operator"), data) == "&":
        return node.child_by_field_name("argument") or node
    return node


def _kind(step, base=None):
    """A kind of value: `step(op, left, right, taint, data, again)` decides a binary expression
    (`again` tests an operand for the same kind), `base(node, data)` other expressions; variables
    are followed through every value assigned to them, parentheses and casts looked through."""
    def test(node: ts.Node | None, taint, data: bytes, depth: int = 0) -> bool:
        if node is None or depth > _DEPTH:
            return False
        node = _strip(node)
        if base is not None and base(node, data):
            return True
        if node.type == "identifier":
            values = taint.values(node)
            return bool(values) and all(test(v, taint, data, depth + 1) for v in values)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if node.type != "binary_expression" or left is None or right is None:
            return False
        op = text(node.child_by_field_name("operator"), data)
        return step(op, left, right, taint, data, lambda n: test(n, taint, data, depth + 1))
    test.__doc__ = step.__doc__
    return test


@_kind
def element_index(op, left, right, taint, data, again) -> bool:
    """Per-thread only through a thread index scaled by a constant other than 1."""
    if op == "*":
        for side, factor in ((left, right), (right, left)):
            scale = int_value(factor, data)
            if scale is not None and scale not in (0, 1) and taint.depends(side):
                return True
    if op == "<<" and (int_value(right, data) or 0) > 0 and not taint.depends(right):
        return taint.depends(left)
    if op in ("%", "+", "-", "*", "<<"):
        dependent = [s for s in (left, right) if taint.depends(s)]
        return bool(dependent) and all(again(s) for s in dependent)
    return False


def _data_bits(op, left, right, taint, data, again) -> bool:
    """Data read from memory, or per-thread only through shift counts: bits a thread selects
    from a value; and the shifts and masks of those."""
    if op not in BITWISE:
        return False
    if op in SHIFTS and not taint.depends(left):
        return taint.depends(right)
    dependent = [s for s in ((left,) if op in SHIFTS else (left, right)) if taint.depends(s)]
    return bool(dependent) and all(again(s) for s in dependent)


data_bits = _kind(_data_bits, loaded)


def not_a_thread_count(node: ts.Node | None, taint, data: bytes) -> bool:
    return element_index(node, taint, data) or data_bits(node, taint, data)
