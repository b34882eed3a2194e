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


def definitions(tree: ts.Tree, data: bytes) -> dict[bytes, int]:
    """Name -> byte offset of its first definition in `data`."""
    out: dict[bytes, int] = {}
    for node in ts.QueryCursor(_query()).captures(tree.root_node).get("n", ()):
        name = data[node.start_byte:node.end_byte]
        if name not in out or node.start_byte < out[name]:
            out[name] = node.start_byte
    return out


def file_definitions(ctx) -> dict[bytes, int]:
    """Definitions of the file a (possibly fragment) context belongs to, computed once."""
    root = ctx.file_context
    defs = root.cache.get("_defined_names")
    if defs is None:
        defs = root.cache["_defined_names"] = definitions(root.tree, root.data)
    return defs


@lru_cache(maxsize=256)
def definitions_of(path: str, mtime_ns: int, size: int) -> frozenset[bytes]:
    """Names defined in a file on disk (a local header), cached by its stats."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return frozenset()
    return frozenset(definitions(parsing.parse(LANGUAGE, data), data))
