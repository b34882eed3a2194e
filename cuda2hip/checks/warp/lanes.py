"""What holds a wavefront's lanes: the ballots (64-bit masks on HIP), the integer types that
hold 32 or 64 of them, and the variables a ballot is stored in."""

from __future__ import annotations

import tree_sitter as ts

from ...lang.cxx.syntax import (callee_name, declarator_name, enclosing_function, find_declaration, function_body,
                                named, text, walk)

BALLOTS = frozenset({"__ballot_sync", "__ballot", "__activemask"})
TYPES_32 = frozenset({"int", "unsigned", "unsigned int", "signed", "signed int", "uint32_t", "int32_t",
                      "std::uint32_t", "std::int32_t", "uint", "unsigned int32_t"})
TYPES_64 = frozenset({"unsigned long long", "unsigned long long int", "long long", "long long int", "uint64_t",
                      "int64_t", "std::uint64_t", "std::int64_t", "unsigned long", "long", "size_t", "lane_mask_t",
                      "__hip_lane_mask_t"})
# 32-bit bit functions -> their 64-bit forms (None: none gives the same result)
BIT_FUNCTIONS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": None}


def strip_type(t: str) -> str:
    return " ".join(w for w in t.split() if w not in ("const", "volatile", "constexpr", "static", "register"))


def ballot_variable(node: ts.Node, ctx) -> tuple[ts.Node, ts.Node] | None:
    """(type node, declaration) of a variable initialised from a ballot, when `node` names one."""
    if node.type != "identifier":
        return None
    data = ctx.data
    name = text(node, data)
    found = find_declaration(node, name, data)
    if found is None:
        return None
    typ, decl = found
    if decl.type != "declaration":
        return None
    for d in decl.children_by_field_name("declarator"):
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        if declarator_name(d, data) == name and value is not None and is_ballot(value, data):
            return typ, decl
    fn = enclosing_function(node)
    for n in walk(function_body(fn)) if fn is not None and function_body(fn) is not None else ():
        if n.type == "assignment_expression" and text(n.child_by_field_name("left"), data) == name \
                and is_ballot(n.child_by_field_name("right"), data):
            return typ, decl
    return None


def is_ballot(node: ts.Node | None, data: bytes) -> bool:
    while node is not None and node.type == "parenthesized_expression" and len(named(node)) == 1:
        node = named(node)[0]
    return node is not None and node.type == "call_expression" and callee_name(node, data) in BALLOTS
