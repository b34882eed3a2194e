"""Names a file defines itself (macros, functions, types, variables, enumerators, namespaces).

Rules that report CUDA-looking names use this to tell a project's own `CUDA_CHECK` macro or
`umax` helper from the CUDA API: a name the project defines is not a leftover of the migration.
"""

from __future__ import annotations

from functools import lru_cache

import tree_sitter as ts

from .. import parse as parsing

LANGUAGE = "cuda"

_QUERY = """
(preproc_def name: (identifier) @n)
(preproc_function_def name: (identifier) @n)
(function_declarator declarator: (identifier) @n)
(function_declarator declarator: (field_identifier) @n)
(function_declarator declarator: (qualified_identifier name: (identifier) @n))
(type_definition declarator: (type_identifier) @n)
(struct_specifier name: (type_identifier) @n body: (_))
(class_specifier name: (type_identifier) @n body: (_))
(union_specifier name: (type_identifier) @n body: (_))
(enum_specifier name: (type_identifier) @n body: (_))
(enumerator name: (identifier) @n)
(init_declarator declarator: (identifier) @n)
(declaration declarator: (identifier) @n)
(pointer_declarator declarator: (identifier) @n)
(array_declarator declarator: (identifier) @n)
(reference_declarator (identifier) @n)
(parameter_declaration declarator: (identifier) @n)
(field_declaration declarator: (field_identifier) @n)
(namespace_definition name: (namespace_identifier) @n)
(alias_declaration name: (type_identifier) @n)
"""


@lru_cache(maxsize=1)
def _query() -> ts.Query:
    return ts.Query(parsing.language(LANGUAGE), _QUERY)


# The name _QUERY captures; the CUDA frontend adds _QUERY to its dispatch query (one pass over
# the tree instead of two) and hands the captured nodes to `file_definitions`.
CAPTURE = "n"
PATTERNS = _QUERY


def definitions(tree: ts.Tree, data: bytes) -> dict[bytes, int]:
    """Name -> byte offset of its first definition in `data`."""
    if parsing.walk_instead_of_query("definitions", len(data), tree.root_node):  # see parse.py
        nodes = _walk(tree.root_node)
    else:
        nodes = ts.QueryCursor(_query()).captures(tree.root_node).get(CAPTURE, ())
    return first_offsets(nodes, data)


def first_offsets(nodes, data: bytes) -> dict[bytes, int]:
    """Name -> offset of its first occurrence among the definition `nodes` (any order)."""
    out: dict[bytes, int] = {}
    for node in nodes:
        name = data[node.start_byte:node.end_byte]
        if name not in out or node.start_byte < out[name]:
            out[name] = node.start_byte
    return out


# What _QUERY captures, by node kind: (field, kinds the field's node may have; None: any
# child, not a field, of these kinds), plus whether the node needs a `body`.
_FIELDS: dict[str, tuple[str | None, frozenset[str], bool]] = {
    "preproc_def": ("name", frozenset({"identifier"}), False),
    "preproc_function_def": ("name", frozenset({"identifier"}), False),
    "function_declarator": ("declarator", frozenset({"identifier", "field_identifier", "qualified_identifier"}), False),
    "type_definition": ("declarator", frozenset({"type_identifier"}), False),
    "struct_specifier": ("name", frozenset({"type_identifier"}), True),
    "class_specifier": ("name", frozenset({"type_identifier"}), True),
    "union_specifier": ("name", frozenset({"type_identifier"}), True),
    "enum_specifier": ("name", frozenset({"type_identifier"}), True),
    "enumerator": ("name", frozenset({"identifier"}), False),
    "init_declarator": ("declarator", frozenset({"identifier"}), False),
    "declaration": ("declarator", frozenset({"identifier"}), False),
    "pointer_declarator": ("declarator", frozenset({"identifier"}), False),
    "array_declarator": ("declarator", frozenset({"identifier"}), False),
    "reference_declarator": (None, frozenset({"identifier"}), False),
    "parameter_declaration": ("declarator", frozenset({"identifier"}), False),
    "field_declaration": ("declarator", frozenset({"field_identifier"}), False),
    "namespace_definition": ("name", frozenset({"namespace_identifier"}), False),
    "alias_declaration": ("name", frozenset({"type_identifier"}), False),
}


def _walk(root: ts.Node) -> list[ts.Node]:
    """The nodes _QUERY captures, found by walking the tree (no query to build)."""
    out: list[ts.Node] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        spec = _FIELDS.get(node.type) if node.is_named else None
        if spec is not None:
            field, kinds, needs_body = spec
            if needs_body and node.child_by_field_name("body") is None:
                pass
            elif field is None:
                out.extend(c for c in node.named_children if c.type in kinds)
            else:
                for child in node.children_by_field_name(field):
                    if child.type in kinds:
                        if child.type == "qualified_identifier":
                            name = child.child_by_field_name("name")
                            if name is not None and name.type == "identifier":
                                out.append(name)
                        else:
                            out.append(child)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


def file_definitions(ctx) -> dict[bytes, int]:
    """Definitions of the file a (possibly fragment) context belongs to, computed once."""
    root = ctx.file_context
    defs = root.cache.get("_defined_names")
    if defs is None:
        nodes = root.cache.pop(NODES_KEY, None)  # captured with the frontend's dispatch query
        defs = root.cache["_defined_names"] = (
            definitions(root.tree, root.data) if nodes is None else first_offsets(nodes, root.data))
    return defs


# Cache key (in the file context) of the definition nodes the frontend captured for this file.
NODES_KEY = "_definition_nodes"


@lru_cache(maxsize=256)
def definitions_in(data: bytes) -> frozenset[bytes]:
    """Names defined in a file's content (a local header), cached by content: in this process,
    and on disk for runs that use the cache (content_facts: a header is parsed once, not on
    every pre-commit call that includes it)."""
    import msgspec

    from ...cache import facts as content_facts

    stored = content_facts.lookup(FACTS_KIND, data)
    if stored is not None:
        try:
            return frozenset(msgspec.msgpack.decode(stored, type=list[bytes]))
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    names = frozenset(definitions(parsing.parse(LANGUAGE, data), data))
    content_facts.store(FACTS_KIND, data, msgspec.msgpack.encode(sorted(names)))
    return names


FACTS_KIND = "definitions"
