"""The CUDA frontend finds the nodes rules want either with a tree-sitter query or, while a
process has linted little (building a query costs ~10 ms), by walking the tree: both must hand
the rules exactly the same nodes in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter as ts

from conftest import FIXTURES, ROOT
from cuda2hip.engine.frontends import cuda
from cuda2hip.lang import parse as parsing

KINDS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier",
                   "call_expression", "preproc_include", "function_definition", "declaration",
                   "template_function", "qualified_identifier", "string_literal", "number_literal",
                   "true", "ERROR", "not_a_node_kind"})


def _sources() -> list[Path]:
    paths = sorted(FIXTURES.rglob("*.cu")) + sorted(FIXTURES.rglob("*.cuh")) + sorted(FIXTURES.rglob("*.h"))
    paths += sorted((ROOT / "examples").rglob("*.cu"))
    hip = Path("/usr/include/hip")
    if hip.is_dir():
        paths += sorted(hip.rglob("*.h"))[:40]
    return paths


def _spans(nodes):
    return [(n.start_byte, n.end_byte, n.type) for n in nodes]


@pytest.mark.parametrize("with_comments", [False, True])
def test_walk_finds_what_the_query_captures(with_comments):
    sources = _sources()
    assert len(sources) >= 5
    query = cuda._dispatch_query(KINDS, with_comments)
    for path in sources:
        tree = parsing.parse("cuda", path.read_bytes())
        walked = cuda._walk(tree.root_node, cuda._named_kinds(KINDS), with_comments)
        captured = ts.QueryCursor(query).captures(tree.root_node)
        for name in ("node", "macro", "comment"):
            # The query's order is its own (not the document's): the frontend sorts both.
            order = cuda._document_order
            assert _spans(sorted(walked[name], key=order)) == _spans(sorted(captured.get(name, []), key=order)), \
                (path, name)


def test_definitions_walk_finds_what_the_query_captures():
    """defined_names (a project's own names) also walks before it builds its query."""
    from cuda2hip.lang.cxx import definitions as defined_names

    sources = _sources()
    for path in sources:
        tree = parsing.parse("cuda", path.read_bytes())
        walked = sorted((n.start_byte, n.end_byte) for n in defined_names._walk(tree.root_node))
        captured = sorted((n.start_byte, n.end_byte) for n in
                          ts.QueryCursor(defined_names._query()).captures(tree.root_node).get("n", []))
        assert walked == captured, path


def test_any_of_spellings_prefilter():
    """A pattern rule whose `any:` alternatives are all spelled out is skipped on files that hold
    none of them, and kept when one occurs."""
    from cuda2hip.engine.engine import Engine
    from cuda2hip.settings import Settings

    engine = Engine(Settings(select=("HIP304",), use_cache=False))
    rules = engine.ruleset_for("a.cu", "cuda")
    [rule] = [r for r in rules.rules if r.code == "HIP304"]
    assert rule.alternatives == (("cudaStreamDefault",), ("hipStreamDefault",))
    assert rule not in rules.active(b"int main() { cudaStream_t s; }").rules
    assert rule in rules.active(b"f(hipStreamDefault);").rules


def test_dispatch_query_captures_the_definitions_and_the_same_nodes():
    """The frontend's dispatch query also captures the definitions (one pass over the tree):
    they are the nodes the definitions query captures, and the dispatch captures do not change."""
    from cuda2hip.lang.cxx import definitions as defined_names

    plain = cuda._dispatch_query(KINDS, True)
    combined = cuda._dispatch_query(KINDS, True, True)
    for path in _sources():
        data = path.read_bytes()
        tree = parsing.parse("cuda", data)
        alone = ts.QueryCursor(defined_names._query()).captures(tree.root_node).get("n", [])
        both = ts.QueryCursor(combined).captures(tree.root_node)
        assert sorted(_spans(both.pop(defined_names.CAPTURE, []))) == sorted(_spans(alone)), path
        assert defined_names.first_offsets(alone, data) == defined_names.definitions(tree, data), path
        without = ts.QueryCursor(plain).captures(tree.root_node)
        assert set(both) == set(without)
        for name in without:
            order = cuda._document_order
            assert _spans(sorted(both[name], key=order)) == _spans(sorted(without[name], key=order)), (path, name)


def test_prefilter_with_the_file_words_keeps_the_same_rules():
    """`RuleSet.active(data, words)` looks identifier-shaped literals up in the file's distinct
    words instead of its text: the same rules must be kept, literals inside longer words too."""
    from cuda2hip.engine.engine import Engine
    from cuda2hip.settings import Settings

    engine = Engine(Settings(select=("ALL",), use_cache=False))
    rules = engine.ruleset_for("a.cu", "cuda")
    texts = [p.read_bytes() for p in _sources()]
    texts += [b"", b"1cudaMallocHost x$cudaFree __syncthreads_count", b"\xc3\xa9cudaMemcpy\xc3\xa9 <<<1,1>>>",
              b"my_cudaStreamDefault_x 9hipStreamLegacy"]
    for data in texts:
        words = set(cuda._WORDS.findall(data))
        assert [r.code for r in rules.active(data, words).rules] == [r.code for r in rules.active(data).rules]
