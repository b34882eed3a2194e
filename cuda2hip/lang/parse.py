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


# The rules look into the local headers a file includes (what they define, whether they get the
# runtime: definitions_in, runtime_include, rename_collisions) and a run lints those headers too:
# a header's tree is kept for the next of them that asks, by content, for the most recent
# contents up to SHARED_BYTES of source (a tree takes ~36 bytes per source byte). Trees are never
# changed in place (parse_edited edits a copy), so one tree serves them all.
SHARED_BYTES = 1 << 19
HEADER_SUFFIXES = (".h", ".cuh", ".hu", ".hpp", ".hh", ".hxx", ".inl", ".H")
_SHARED: dict[tuple[str, bytes], ts.Tree] = {}
_shared_size = 0


def parse_shared(name: str, data: bytes) -> ts.Tree:
    """`parse(name, data)`, shared with the other askers of the same content (see _SHARED)."""
    global _shared_size
    key = (name, data)
    tree = _SHARED.pop(key, None)
    if tree is None:
        tree = parse(name, data)
        if len(data) > SHARED_BYTES:
            return tree
        _shared_size += len(data)
        while _shared_size > SHARED_BYTES:
            old = next(iter(_SHARED))
            del _SHARED[old]
            _shared_size -= len(old[1])
    _SHARED[key] = tree  # the most recent last
    return tree


def parse_source(name: str, source) -> ts.Tree:
    """The tree of a SourceText: re-parsed incrementally when the fix loop made it by editing a
    text parsed before (`source.edited_from`: that text's tree and bytes, and the changes); a
    header the rules parsed already (parse_shared) is not parsed again."""
    origin = source.edited_from
    if origin is None:
        if source.path.endswith(HEADER_SUFFIXES):  # the files others include: kept for them
            return parse_shared(name, source.data)
        tree = _SHARED.get((name, source.data)) if _SHARED else None
        return parse(name, source.data) if tree is None else tree
    source.edited_from = None  # used once: the old tree is not kept alive
    if len(source.data) > FRESH_PARSE_BYTES:
        del origin  # the old tree goes before the new one is built (see FRESH_PARSE_BYTES)
        return parse(name, source.data)
    old_tree, old_data, changes = origin
    return parse_edited(name, source.data, old_tree, old_data, changes)


# An incremental re-parse needs the old tree while it builds the new one: two trees of ~36
# bytes per source byte each. Above this size a file is re-parsed from scratch instead (after
# the old tree is freed), which keeps `fix` within the memory budget of docs/batch.md.
FRESH_PARSE_BYTES = 1 << 20


def parse_edited(name: str, data: bytes, old_tree: ts.Tree, old_data: bytes, changes) -> ts.Tree:
    """The tree of `data`, which is `old_data` with `changes` (fix.apply.Change) made: tree-sitter
    re-uses the subtrees of `old_tree` that the changes do not touch and yields the tree a fresh
    parse yields (tests/test_reparse.py compares them over every fixture). If the changes do not
    describe exactly how `data` differs from `old_data`, a fresh parse."""
    p = parser(name)
    if old_tree.language != p.language or not _describes(changes, old_data, data):
        return parse(name, data)
    tree = old_tree.copy()  # the old tree may be edited again (a pass redone with fewer fixes)
    # Edited from the first change on: before a change, the text is already the new text, so
    # its positions are the new text's. Rows count '\n' only, columns are bytes (tree-sitter's).
    row = pos = 0
    for old_start, old_end, new_start, new_end in _coalesced(changes):
        row += data.count(b"\n", pos, new_start)
        pos = new_start
        start = ts.Point(row, new_start - (data.rfind(b"\n", 0, new_start) + 1))
        tree.edit(new_start, new_start + (old_end - old_start), new_end, start,
                  _advance(start, old_data, old_start, old_end), _advance(start, data, new_start, new_end))
    return p.parse(data, tree)


# Changes closer than this are one edit of the tree: each edit costs a walk down the tree, and
# the parser re-reads a few more bytes instead (measured on the benchmark corpus: fastest).
COALESCE_GAP = 32


def _coalesced(changes) -> list[tuple[int, int, int, int]]:
    out: list[list[int]] = []
    for c in changes:
        if out and c.old_start - out[-1][1] <= COALESCE_GAP:
            last = out[-1]
            last[1], last[3] = c.old_end, c.new_end
        else:
            out.append([c.old_start, c.old_end, c.new_start, c.new_end])
    return out


def _advance(point: ts.Point, data: bytes, start: int, end: int) -> ts.Point:
    """The position after data[start:end], which begins at `point`."""
    lines = data.count(b"\n", start, end)
    if not lines:
        return ts.Point(point.row, point.column + end - start)
    return ts.Point(point.row + lines, end - (data.rfind(b"\n", start, end) + 1))


def _describes(changes, old: bytes, new: bytes) -> bool:
    """Whether `new` is `old` with the ranges of `changes` replaced, and nothing else changed."""
    old_view, new_view = memoryview(old), memoryview(new)
    o = n = 0
    for c in changes:
        if c.old_start < o or c.old_end < c.old_start or c.new_end < c.new_start \
                or old_view[o:c.old_start] != new_view[n:c.new_start]:
            return False
        o, n = c.old_end, c.new_end
    return old_view[o:] == new_view[n:]


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


def walk_instead_of_query(purpose: str, size: int, root: ts.Node | None = None) -> bool:
    """Whether to walk (rather than query) a tree of `size` bytes for `purpose` now; always
    for a tree `root` deeper than a query can go (see `queryable`)."""
    if root is not None and not queryable(root):
        return True
    done = _walked.get(purpose, 0)
    if done >= WALK_BYTES_BEFORE_QUERY:
        return False
    _walked[purpose] = done + size
    return True



# tree-sitter's query cursor keeps a node's depth in 16 bits: below depth 65,535 it misses
# nodes (silently) and takes time quadratic in the depth (70,000 nested terms: 7 s for one
# query, and 3 of 70,000 nodes missed). Generated code gets there (a 100,000-term sum).
QUERY_DEPTH_LIMIT = 65_000


def queryable(root: ts.Node, limit: int = QUERY_DEPTH_LIMIT) -> bool:
    """Whether the tree under `root` is shallow enough for a query. A node with fewer
    descendants than the depth left is shallow enough whatever its shape, so only the (few)
    nodes holding more are looked into: immediate for ordinary files, however big."""
    stack = [(root, limit)]
    while stack:
        node, left = stack.pop()
        if node.descendant_count < left:
            continue
        if left <= 1:
            return False
        stack.extend((child, left - 1) for child in node.children)
    return True
