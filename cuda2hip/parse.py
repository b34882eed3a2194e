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


def error_nodes(tree: ts.Tree, name: str) -> list[ts.Node]:
    """ERROR and MISSING nodes of a tree, in document order."""
    root = tree.root_node
    if not root.has_error:
        return []
    # Every ERROR or MISSING node lies below nodes flagged `has_error`, so walking only those
    # subtrees finds them all (and no query is built: that costs ~10 ms for this grammar).
    found: list[ts.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            found.append(node)
            continue
        if node.is_error:
            found.append(node)
        if node.has_error:
            stack.extend(node.children)
    found.sort(key=lambda n: (n.start_byte, n.end_byte))
    return found


def error_count(tree: ts.Tree, name: str) -> int:
    return len(error_nodes(tree, name))


# Building a tree-sitter Query costs ~10 ms of CPU per query for this grammar (query analysis
# goes over the whole parse table), about what walking the trees of two or three typical files
# in Python costs. So a process walks trees until it has walked this many bytes for a purpose
# (a pre-commit run on a file or two), and then builds the query, once.
WALK_BYTES_BEFORE_QUERY = 32 * 1024
_walked: dict[str, int] = {}


def walk_instead_of_query(purpose: str, size: int) -> bool:
    """Whether to walk (rather than query) a tree of `size` bytes for `purpose` now."""
    done = _walked.get(purpose, 0)
    if done >= WALK_BYTES_BEFORE_QUERY:
        return False
    _walked[purpose] = done + size
    return True

