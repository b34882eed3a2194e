"""Who a call calls: the node naming the called function, shared by the engine's callee index
and by predicates."""

from __future__ import annotations

import tree_sitter as ts

CALL = "call_expression"


# The wrappers around a callee name, and the field of each that holds the name.
_NAME_FIELD = {"qualified_identifier": "name", "template_function": "name", "field_expression": "field"}


def callee_node(call: ts.Node) -> ts.Node | None:
    """The node naming the called function: `f`, `ns::f` -> `f`, `obj.f` -> `f`, `f<T>` -> `f`."""
    fn = call.child_by_field_name("function")
    while fn is not None:
        kind = fn.type
        if kind in ("identifier", "field_identifier"):
            return fn
        field = _NAME_FIELD.get(kind)
        if field is None:
            return None
        fn = fn.child_by_field_name(field)
    return None


def call_named_by(name: ts.Node) -> ts.Node | None:
    """The reverse of `callee_node`: the call whose callee node is `name` (an identifier or
    field_identifier), or None."""
    node, parent = name, name.parent
    while parent is not None:
        kind = parent.type
        if kind == CALL:
            return parent if parent.child_by_field_name("function") == node else None
        field = _NAME_FIELD.get(kind)
        if field is None or parent.child_by_field_name(field) != node:
            return None
        node, parent = parent, parent.parent
    return None


def callee_name(call: ts.Node, data: bytes) -> str | None:
    fn = callee_node(call)
    return None if fn is None else data[fn.start_byte:fn.end_byte].decode("utf-8", errors="replace")
