"""tree-sitter parsing: one cached parser per grammar, and parse-error accounting.

tree-sitter-cuda is a superset of tree-sitter-cpp that understands `__global__`, `<<<...>>>`
launches and CUDA qualifiers. Real CUDA code often contains regions tree-sitter recovers from
(macro-decorated declarations, `#if` branches that split braces): error recovery is normal, so
the pipeline compares error counts before and after a fix instead of demanding a clean tree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import tree_sitter as ts

# Grammar loaders by language id; other frontends register theirs (see `register_grammar`).
_GRAMMARS: dict[str, Callable[[], object]] = {}


def _cuda_grammar():
    import tree_sitter_cuda

    return tree_sitter_cuda.language()


_GRAMMARS["cuda"] = _cuda_grammar


def register_grammar(name: str, loader: Callable[[], object]) -> None:
    _GRAMMARS[name] = loader


@lru_cache(maxsize=None)
def language(name: str) -> ts.Language:
    try:
        loader = _GRAMMARS[name]
    except KeyError:
        raise KeyError(f"no tree-sitter grammar registered for language {name!r}") from None
    return ts.Language(loader())


@lru_cache(maxsize=None)
def parser(name: str) -> ts.Parser:
    return ts.Parser(language(name))


def parse(name: str, data: bytes) -> ts.Tree:
    return parser(name).parse(data)


@lru_cache(maxsize=None)
def _error_query(name: str) -> ts.Query:
    return ts.Query(language(name), "(ERROR) @e")


def error_nodes(tree: ts.Tree, name: str) -> list[ts.Node]:
    """ERROR and MISSING nodes of a tree, in document order."""
    root = tree.root_node
    if not root.has_error:
        return []
    found: list[ts.Node] = list(ts.QueryCursor(_error_query(name)).captures(root).get("e", []))
    # MISSING nodes are zero-width tokens tree-sitter invented; queries cannot match them, so
    # walk the subtrees flagged as containing errors to find them.
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(node.children)
    found.sort(key=lambda n: (n.start_byte, n.end_byte))
    return found


def error_count(tree: ts.Tree, name: str) -> int:
    return len(error_nodes(tree, name))


# A file is "not C/C++/CUDA at all" (and refused) only when syntax errors start on this share of
# its non-blank lines AND cover this share of its non-blank bytes. Real code with recoverable
# regions misses one of the two by far: a `#if` that splits braces makes one ERROR node cover
# the whole file but starts on one line; macro-decorated declarations start errors on many lines
# but cover little. Markdown, YAML, Python, JSON, TOML and prose meet both.
FOREIGN_ERROR_LINES = 0.3
FOREIGN_ERROR_BYTES = 0.5
FOREIGN_MIN_LINES = 3  # too little text to judge


def foreign_text_reason(data: bytes, errors: list[ts.Node], error_lines: list[int],
                        what: str = "C/C++/CUDA") -> str | None:
    """Why `data` does not look like source of the grammar at all (None: it does)."""
    if not errors:
        return None
    lines = sum(1 for line in data.splitlines() if line.strip())
    if lines < FOREIGN_MIN_LINES or len(error_lines) < FOREIGN_ERROR_LINES * lines:
        return None
    spans: list[list[int]] = []
    for node in errors:  # document order: merge nested and overlapping spans
        if spans and node.start_byte <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], node.end_byte)
        else:
            spans.append([node.start_byte, node.end_byte])
    covered = sum(_solid(data[s:e]) for s, e in spans)
    solid = _solid(data)
    if solid == 0 or covered < FOREIGN_ERROR_BYTES * solid:
        return None
    return (f"does not parse as {what} (syntax errors start on {len(error_lines)} of {lines} "
            f"lines and cover {100 * covered // solid}% of the text); left untouched")


def _solid(data: bytes) -> int:
    """Bytes that are not white space."""
    return len(data) - sum(data.count(c) for c in (b" ", b"\t", b"\n", b"\r", b"\f", b"\v"))
