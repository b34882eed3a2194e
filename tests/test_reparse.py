"""The fix loop re-parses a fixed text incrementally (the old tree, edited where the fixes
changed the text): the tree must be the one a fresh parse yields, node for node, and the
changes that `apply_edits_tracked` reports must describe the new text exactly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cuda2hip.engine.engine import Engine
from cuda2hip.engine.frontends.cuda import CudaFrontend
from cuda2hip.findings import Applicability, Edit
from cuda2hip.fix.apply import Change, apply_edits, apply_edits_tracked, apply_fixes_tracked, choose_fixes
from cuda2hip.lang import parse as parsing
from cuda2hip.lang.source import SourceText
from cuda2hip.rulebook.loader import RuleSource, builtin_rules_dir, load_rules
from cuda2hip.settings import Settings

ALL = frozenset({Applicability.SAFE, Applicability.UNSAFE})


def _shape(tree) -> list[tuple]:
    """Every node of a tree, in order, with everything the rules can see of it (not the parser
    state a node was made in: a re-used node keeps its own, and no rule looks at it)."""
    out = []
    cursor = tree.walk()
    while True:
        n = cursor.node
        out.append((n.type, n.kind_id, n.grammar_id, n.start_byte, n.end_byte, n.start_point, n.end_point,
                    n.is_named, n.is_missing, n.is_error, n.has_error, n.is_extra,
                    n.child_count, cursor.field_name))
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


def _cuda_sources() -> list[Path]:
    suffixes = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".hip"}
    paths = [p for p in sorted(FIXTURES.rglob("*")) if p.suffix in suffixes and p.is_file()]
    return paths + sorted((ROOT / "examples").rglob("*.cu"))


def _rule_case_sources() -> list[bytes]:
    out = []
    for rule in load_rules([RuleSource(builtin_rules_dir(), builtin=True)], use_cache=False):
        if rule.language != "cuda":
            continue
        for case in rule.tests.invalid:
            out.append((case if isinstance(case, str) else case.code).encode())
    return out


def _check(fe, rules, settings, data: bytes, name: str) -> int:
    """Lint `data`, apply every fix the loop could choose; the incremental re-parse must equal a
    fresh parse. Returns the number of changes checked."""
    source = SourceText.from_bytes(data, name)
    result = fe.lint(source, rules, settings, validate=False)
    fixes = [f.fix for f in result.findings if f.fix is not None and f.fix.edits and f.fix.applicability in ALL]
    if not fixes:
        return 0
    new, changes = apply_fixes_tracked(source.data, choose_fixes(fixes), source.newline)
    assert parsing._describes(changes, source.data, new), name
    fresh = parsing.parse("cuda", new)
    again = parsing.parse_edited("cuda", new, result.tree, source.data, changes)
    assert _shape(again) == _shape(fresh), name
    assert again.root_node.text == new
    return len(changes)


def test_incremental_reparse_equals_a_fresh_parse_on_fixtures_and_rule_cases():
    settings = Settings(select=("ALL",), use_cache=False, unsafe_fixes=True)
    engine = Engine(settings)
    fe = CudaFrontend()
    rules = engine.ruleset_for("case.cu", "cuda")
    edited = 0
    for path in _cuda_sources():
        edited += _check(fe, rules, settings, path.read_bytes(), str(path)) > 0
    for i, data in enumerate(_rule_case_sources()):
        edited += _check(fe, rules, settings, data, f"case{i}.cu") > 0
    assert edited >= 100


def test_incremental_reparse_after_random_edits():
    """Random replacements of identifiers, punctuation and whole lines (parse errors made and
    mended included) in the fixture files."""
    rng = random.Random(1234)
    pieces = ["", "x", "hipFree", "(", ")", "{", "}", ";", "\n", "/*", "*/", "\"", "#define A \\\n", "<<<1,1>>>",
              "template <typename T>", "__global__ void k() {", "\\\n"]
    for path in _cuda_sources()[:60]:
        data = path.read_bytes()
        if not data:
            continue
        tree = parsing.parse("cuda", data)
        for _ in range(3):
            edits, pos = [], 0
            while pos < len(data) and len(edits) < 12:
                start = pos + rng.randrange(0, max(1, len(data) // 8))
                if start > len(data):
                    break
                end = min(len(data), start + rng.randrange(0, 12))
                edits.append(Edit(start, end, rng.choice(pieces)))
                pos = end + 1
            if not edits:
                continue
            try:
                new, changes = apply_edits_tracked(data, edits)
            except UnicodeDecodeError:
                continue
            assert parsing._describes(changes, data, new)
            assert _shape(parsing.parse_edited("cuda", new, tree, data, changes)) == _shape(parsing.parse("cuda", new)), path


def test_changes_cover_realigned_continuations_and_newline_styles():
    data = b"#define F(x) \\\r\n  cudaFree(x);     \\\r\n  done()\r\nint y;\r\n"
    start, y = data.index(b"cudaFree"), data.index(b"y;")
    edits = [Edit(start, start + 8, "hipFree"), Edit(y, y + 1, "a\nb")]
    new, changes = apply_edits_tracked(data, edits, "\r\n")
    assert new == apply_edits(data, edits, "\r\n")
    assert new == b"#define F(x) \\\r\n  hipFree(x);      \\\r\n  done()\r\nint a\r\nb;\r\n"
    # The realigned line is one change (the edit and the padding after it), the insertion another.
    line = data.index(b"  cudaFree")
    assert changes == [Change(line, data.index(b"  done"), line, new.index(b"  done")),
                       Change(y, y + 1, new.index(b"a\r\nb"), new.index(b"a\r\nb") + 4)]
    assert parsing._describes(changes, data, new)
    assert not parsing._describes(changes[:1], data, new)


def test_a_wrong_description_falls_back_to_a_fresh_parse():
    old = b"int a = cudaFree(p);\n"
    new = b"int a = hipFree(p);\n"
    tree = parsing.parse("cuda", old)
    wrong = [Change(0, 1, 0, 1)]
    assert _shape(parsing.parse_edited("cuda", new, tree, old, wrong)) == _shape(parsing.parse("cuda", new))


@pytest.mark.parametrize("unsafe", [False, True])
def test_fix_loop_output_is_the_same_with_and_without_incremental_reparse(unsafe, monkeypatch):
    from cuda2hip.fix import loop

    settings = Settings(use_cache=False, unsafe_fixes=unsafe)
    engine = Engine(settings)
    fe = CudaFrontend()
    rules = engine.ruleset_for("case.cu", "cuda")
    allowed = loop.allowed_applicabilities(unsafe)

    def run(path):
        source = SourceText.read(path)
        out = fe.fix(source, rules, settings, allowed)
        return out.source.data, [(f.code, f.start, f.end, f.line, f.column, f.message) for f in out.remaining], \
            [(f.code, f.start, f.message) for f in out.fixed], out.passes

    paths = _cuda_sources()
    incremental = [run(p) for p in paths]
    monkeypatch.setattr(parsing, "parse_edited", lambda name, data, *rest: parsing.parse(name, data))
    assert [run(p) for p in paths] == incremental
