"""Ballots truncated to 32 bits (HIP404): a ballot or active mask stored in, or cast to, a 32-bit
integer, or given to a 32-bit bit function, loses lanes 32-63 of a 64-lane wavefront."""

from __future__ import annotations

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import call_args, callee_name, declarator_name, find_declaration, text, type_text
from .lanes import BALLOTS, BIT_FUNCTIONS, TYPES_32, ballot_variable, is_ballot, strip_type


@predicate("ballot-truncated", callees=set(BIT_FUNCTIONS) | BALLOTS)
def ballot_truncated(node, env, ctx, args):
    """A ballot / active mask stored in a 32-bit variable or cast to 32 bits, or a 32-bit bit
    function (`__popc`, `__ffs`, `__clz`) applied to one. Adds $WHAT."""
    data = ctx.data
    name = callee_name(node, data)
    if name in BIT_FUNCTIONS:
        arguments = call_args(node)
        if len(arguments) != 1:
            return False
        arg = arguments[0]
        if is_ballot(arg, data) or ballot_variable(arg, ctx) is not None:
            return {"WHAT": capture(node, data, f"`{name}` takes 32 bits, so `{text(arg, data)}` loses lanes 32-63")}
        return False
    if name not in BALLOTS:
        return False
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type == "init_declarator" and parent.parent is not None and parent.parent.type == "declaration":
        decl = parent.parent
        t = strip_type(type_text(decl, decl.child_by_field_name("type"), data))
        var = declarator_name(parent.child_by_field_name("declarator"), data)
        if t in TYPES_32:
            return {"WHAT": capture(node, data, f"`{name}` is stored in `{t} {var}`, which keeps lanes 0-31 only")}
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") is not None:
        left = parent.child_by_field_name("left")
        if left.type == "identifier":
            found = find_declaration(node, text(left, data), data)
            if found is not None:
                t = strip_type(type_text(found[1], found[0], data))
                if t in TYPES_32:
                    return {"WHAT": capture(node, data, f"`{name}` is assigned to `{t} {text(left, data)}`, "
                                                          "which keeps lanes 0-31 only")}
    elif parent.type == "cast_expression":
        t = strip_type(text(parent.child_by_field_name("type"), data))
        if t in TYPES_32:
            return {"WHAT": capture(node, data, f"`{name}` is cast to `{t}`, which keeps lanes 0-31 only")}
    return False


@fix_builder("ballot-to-64-bit")
def ballot_to_64_bit(match, ctx, rule):
    data = ctx.data
    node = match.node
    name = callee_name(node, data)
    if name in BIT_FUNCTIONS:
        wide = BIT_FUNCTIONS[name]
        if wide is None:
            return None  # __clzll counts 32 more zeros for a 32-bit value: not a drop-in change
        fn = node.child_by_field_name("function")
        return BuiltFix([Edit(fn.start_byte, fn.end_byte, wide)], applicability="safe",
                        description=f"Use `{wide}` (same result for 32-bit values, all lanes for 64-bit masks)")
    parent = node.parent
    while parent.type == "parenthesized_expression":
        parent = parent.parent
    decl = None
    if parent.type == "init_declarator":
        decl = parent.parent
    elif parent.type == "assignment_expression":
        found = find_declaration(node, text(parent.child_by_field_name("left"), data), data)
        decl = found[1] if found is not None and found[1].type == "declaration" else None
    if decl is None or len(decl.children_by_field_name("declarator")) != 1:
        return None
    typ = decl.child_by_field_name("type")
    return BuiltFix([Edit(typ.start_byte, typ.end_byte, "unsigned long long")],
                    description="Store the mask in `unsigned long long` (HIP's ballot type)")
