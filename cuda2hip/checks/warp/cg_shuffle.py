"""HIP148: a cooperative-groups tile shuffle of a vector value (`tile.shfl_xor(v, 1)` with a
`uint4 v`). CUDA's `thread_block_tile::shfl*` take any trivially copyable type; HIP's (5.2, 6.4
and 7.2: amd_hip_cooperative_groups.h) are templates that call `__shfl*`, which HIP declares for
scalars only, so the instantiation fails inside HIP's header."""

from __future__ import annotations

from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.expr_types import expression_type, type_name
from ...lang.cxx.syntax import call_args, named, text
from ...lang.lazy_regex import LazyRegex

SHUFFLES = frozenset({"shfl", "shfl_xor", "shfl_up", "shfl_down"})
# CUDA's (and HIP's) built-in vector types.
_VECTOR = LazyRegex(r"^(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$")


def _struct_field_type(struct: str, field: str, root, data: bytes) -> str | None:
    """The declared type of `field` in the definition of `struct` in this file (not nested deeper
    than a namespace), or None."""
    stack = [root]
    while stack:
        node = stack.pop()
        for child in named(node):
            if child.type in ("namespace_definition", "declaration_list", "linkage_specification", "declaration",
                              "type_definition"):
                stack.append(child)
            elif child.type in ("struct_specifier", "class_specifier") and text(
                    child.child_by_field_name("name"), data) == struct:
                body = child.child_by_field_name("body")
                for member in named(body) if body is not None else ():
                    if member.type != "field_declaration":
                        continue
                    names = [text(d, data) for d in member.children_by_field_name("declarator")]
                    if field in names:
                        return type_name(member.child_by_field_name("type"), data)
    return None


def value_type(node, data: bytes) -> str | None:
    """The type name of a value expression: a variable, or a field of a struct this file defines."""
    if node.type == "field_expression" and text(node.child_by_field_name("operator"), data) == ".":
        base = expression_type(node.child_by_field_name("argument"), data)
        if base is None or base.pointers:
            return None
        root = node
        while root.parent is not None:
            root = root.parent
        return _struct_field_type(base.name, text(node.child_by_field_name("field"), data), root, data)
    t = expression_type(node, data)
    return t.name if t is not None and t.pointers == 0 else None


@predicate("cg-shuffle-vector", requires=tuple(SHUFFLES))
def cg_shuffle_vector(node, env, ctx, args):
    """`tile.shfl_xor(v, 1)` with a vector-typed `v`. Adds $TYPE and $METHOD."""
    data = ctx.data
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "field_expression":
        return False
    method = fn.child_by_field_name("field")
    if text(method, data) not in SHUFFLES:
        return False
    values = call_args(node)
    if not values:
        return False
    typ = value_type(values[0], data)
    if typ is None or not _VECTOR.match(typ):
        return False
    return {"TYPE": capture(values[0], data, typ), "METHOD": capture(method, data)}
