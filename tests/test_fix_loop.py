"""The fix engine: edit selection, the re-lint loop, reverting fixes that break the parse."""

from __future__ import annotations

import msgspec

from cuda2hip.engine.engine import Engine, load_all_rules
from cuda2hip.engine.frontends.cuda import CudaFrontend
from cuda2hip.findings import Applicability, Edit, Fix
from cuda2hip.fix.apply import apply_edits, choose_fixes
from cuda2hip.fix.loop import allowed_applicabilities
from cuda2hip.lang.source import SourceText
from cuda2hip.results import Mode
from cuda2hip.run.files import process_file
from cuda2hip.project.discover import SourceFile
from cuda2hip.rulebook.schema import Rule
from cuda2hip.settings import Settings


def fx(*edits):
    return Fix(Applicability.SAFE, tuple(Edit(*e) for e in edits))


def test_overlapping_fixes_are_skipped_earliest_wins():
    a, b, c = fx((0, 5, "x")), fx((3, 8, "y")), fx((8, 9, "z"))
    assert choose_fixes([b, c, a]) == [a, c]


def test_two_insertions_at_one_point_conflict():
    a, b = fx((4, 4, "a")), fx((4, 4, "b"))
    assert choose_fixes([a, b]) == [a]


def test_multi_edit_fix_is_all_or_nothing():
    a = fx((0, 1, "A"), (10, 11, "B"))
    b = fx((10, 12, "C"))
    assert choose_fixes([a, b]) == [a]


def test_apply_edits_uses_file_newlines():
    data = b"a;\r\nb;\r\n"
    out = apply_edits(data, [Edit(0, 2, "x;\ny;")], "\r\n")
    assert out == b"x;\r\ny;\r\nb;\r\n"


def test_continuation_backslashes_stay_aligned():
    data = b"#define F(x) \\\n  cudaFree(x);     \\\n  done()\n"
    start = data.index(b"cudaFree")
    out = apply_edits(data, [Edit(start, start + 8, "hipFree")])
    assert out == b"#define F(x) \\\n  hipFree(x);      \\\n  done()\n"


def _rule(**fields) -> Rule:
    base = {"code": "TST002", "id": "breaks-parse", "kind": "pattern", "severity": "warning",
            "summary": "s", "message": "m", "docs": {"what": "a", "why": "b"}}
    base.update(fields)
    return msgspec.convert(base, Rule)


def _fix(rules, code: str, select, unsafe=False):
    settings = Settings(select=tuple(select), use_cache=False, unsafe_fixes=unsafe)
    engine = Engine(settings, rules=rules)
    fe = CudaFrontend()
    rs = engine.ruleset_for("t.cu", "cuda")
    return fe.fix(SourceText.from_bytes(code.encode(), "t.cu"), rs, settings, allowed_applicabilities(unsafe))


def test_fix_that_adds_parse_errors_is_rejected_others_kept():
    breaking = _rule(rule={"pattern": "team_sync()"},
                     fix={"applicability": "safe", "template": "team_sync( {"})
    builtin = load_all_rules(Settings(use_cache=False))
    out = _fix([breaking, *builtin], "void f() { team_sync(); cudaFree(p); }\n",
               ["TST002", "HIP101"])
    assert out.source.data == b"void f() { team_sync(); hipFree(p); }\n"
    assert [r.finding.code for r in out.rejected] == ["TST002"]
    assert out.converged


def test_rejected_fix_is_reported_as_hip003(tmp_path):
    breaking = _rule(rule={"pattern": "team_sync()"},
                     fix={"applicability": "safe", "template": "team_sync( {"})
    rules = [breaking, *load_all_rules(Settings(use_cache=False))]
    f = tmp_path / "t.cu"
    f.write_text("void f() { team_sync(); }\n")
    settings = Settings(select=("TST002", "HIP003"), use_cache=False)
    result = process_file(SourceFile(f, "cuda"), Mode.FIX, settings, Engine(settings, rules=rules))
    codes = sorted(x.code for x in result.findings)
    assert codes == ["HIP003", "TST002"]
    assert "would add parse errors" in next(x.message for x in result.findings if x.code == "HIP003")
    assert f.read_text() == "void f() { team_sync(); }\n"


def test_unsafe_fixes_need_the_flag():
    rule = _rule(rule={"pattern": "cudaDeviceSynchronize()"},
                 fix={"applicability": "unsafe", "template": "sync_all()"})
    code = "void f() { cudaDeviceSynchronize(); }\n"
    assert _fix([rule], code, ["TST002"]).source.data.decode() == code
    assert _fix([rule], code, ["TST002"], unsafe=True).source.data == b"void f() { sync_all(); }\n"


def test_display_only_is_never_applied():
    rule = _rule(rule={"pattern": "cudaDeviceSynchronize()"},
                 fix={"applicability": "display-only", "template": "sync_all()"})
    code = "void f() { cudaDeviceSynchronize(); }\n"
    assert _fix([rule], code, ["TST002"], unsafe=True).source.data.decode() == code


def test_oscillating_fixes_stop_and_leave_file_untouched(tmp_path):
    to_b = _rule(rule={"pattern": "a()"}, fix={"applicability": "safe", "template": "b()"})
    to_a = msgspec.structs.replace(_rule(rule={"pattern": "b()"}, fix={"applicability": "safe", "template": "a()"}),
                                   code="TST003", id="back")
    f = tmp_path / "t.cu"
    f.write_text("void f() { a(); }\n")
    settings = Settings(select=("TST002", "TST003"), use_cache=False)
    result = process_file(SourceFile(f, "cuda"), Mode.FIX, settings, Engine(settings, rules=[to_b, to_a]))
    assert result.error is not None and "did not settle" in result.error.reason
    assert f.read_text() == "void f() { a(); }\n"
