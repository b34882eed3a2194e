"""Who a call calls: the node naming the called function, shared by the engine's callee index
and by predicates."""

from __future__ import annotations

import tree_sitter as ts

CALL = "call_expression"


def callee_node(call: ts.Node) -> ts.Node | None:
    """The node naming the called function: `f`, `ns::f` -> `f`, `obj.f` -> `f`, `f<T>` -> `f`."""
    fn = call.child_by_field_name("function")
    while fn is not None:
        kind = fn.type
        if kind in ("identifier", "field_identifier"):
            return fn
        if kind in ("qualified_identifier", "template_function"):
            fn = fn.child_by_field_name("name")
        elif kind == "field_expression":
            fn = fn.child_by_field_name("field")
        else:
            return None
    return None


def callee_name(call: ts.Node, data: bytes) -> str | None:
    fn = callee_node(call)
    return None if fn is None else data[fn.start_byte:fn.end_byte].decode("utf-8", errors="replace")
