"""Configuration (select, per-file-ignores, exclude, rule options, opt-in rules) and
suppression comments."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

DIRTY = "#include <cuda_runtime.h>\nvoid f() { cudaFree(p); }\n"


def findings(r):
    return json.loads(r.stdout)["findings"]


@pytest.mark.parametrize("warnings", ["", "error::DeprecationWarning"], ids=["", "no-deprecated-api"])
def test_per_file_ignores_and_exclude(tmp_path, warnings):
    """With deprecations as errors too: pathspec 1.x deprecates the "gitwildmatch" patterns the
    `exclude` and `per-file-ignores` specs were built from (a later pathspec removes them)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cuda2hip]\nexclude = ["third_party/"]\n'
        '[tool.cuda2hip.per-file-ignores]\n"legacy/*.cu" = ["HIP100"]\n')
    for rel in ("src/a.cu", "legacy/b.cu", "third_party/c.cu"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(DIRTY)
    r = run_cli("check", "--no-cache", "--format", "json", ".", cwd=tmp_path, env={"PYTHONWARNINGS": warnings})
    got = sorted((x["path"], x["code"]) for x in findings(r))
    assert got == [("legacy/b.cu", "HIP101"), ("src/a.cu", "HIP100"), ("src/a.cu", "HIP101")], r.stderr


def test_gitignore_is_respected(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n*.gen.cu\n")
    for rel in ("a.cu", "build/b.cu", "c.gen.cu"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(DIRTY)
    r = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    assert {x["path"] for x in findings(r)} == {"a.cu"}


def test_cuda2hip_toml_select_and_extend_select(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text('select = ["HIP100"]\n')
    (tmp_path / "a.cu").write_text(DIRTY)
    r = run_cli("check", "--format", "json", "a.cu", cwd=tmp_path)
    assert {x["code"] for x in findings(r)} == {"HIP100"}
    r = run_cli("check", "--format", "json", "--extend-select", "HIP101", "a.cu", cwd=tmp_path)
    assert {x["code"] for x in findings(r)} == {"HIP100", "HIP101"}


def test_unknown_rule_option_is_an_error(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text('[rule-options.HIP101]\nnope = 1\n')
    (tmp_path / "a.cu").write_text(DIRTY)
    r = run_cli("check", "a.cu", cwd=tmp_path)
    assert r.returncode == 2 and "unknown option(s) nope" in r.stderr


def test_suppressions_same_line_previous_line_and_file(tmp_path):
    src = ("#include <cuda_runtime.h>  // cuda2hip: ignore[HIP100]\n"
           "// cuda2hip: ignore[HIP101]\n"
           "void f() { cudaFree(p); }\n"
           "void g() { cudaFree(q); }\n")
    (tmp_path / "a.cu").write_text(src)
    r = run_cli("check", "--format", "json", "a.cu", cwd=tmp_path)
    active = [(x["line"], x["code"]) for x in findings(r) if not x["suppressed"]]
    suppressed = [(x["line"], x["code"]) for x in findings(r) if x["suppressed"]]
    assert active == [(4, "HIP101")]
    assert suppressed == [(1, "HIP100"), (3, "HIP101")]
    # fix leaves suppressed findings alone
    run_cli("fix", "a.cu", cwd=tmp_path)
    out = (tmp_path / "a.cu").read_text()
    assert "#include <cuda_runtime.h>" in out and "void f() { cudaFree(p); }" in out
    assert "void g() { hipFree(q); }" in out


def test_file_level_suppression_and_unused_report(tmp_path):
    (tmp_path / "a.cu").write_text("// cuda2hip: file-ignore[HIP101]\n" + DIRTY + "int x;  // cuda2hip: ignore[HIP100]\n")
    r = run_cli("check", "--format", "json", "a.cu", cwd=tmp_path)
    active = [(x["line"], x["code"]) for x in findings(r) if not x["suppressed"]]
    assert active == [(2, "HIP100"), (4, "HIP001")]
    r = run_cli("fix", "a.cu", cwd=tmp_path)
    assert (tmp_path / "a.cu").read_text().endswith("int x;\n")


def test_suppressed_findings_hidden_from_text_unless_asked(tmp_path):
    (tmp_path / "a.cu").write_text("#include <hip/hip_runtime.h>\n"
                                   "void f() { cudaFree(p); }  // cuda2hip: ignore[HIP101]\n")
    r = run_cli("check", "a.cu", cwd=tmp_path)
    assert r.returncode == 0 and "HIP101" not in r.stdout and "1 suppressed" in r.stdout
    r = run_cli("check", "--show-suppressed", "a.cu", cwd=tmp_path)
    assert "(suppressed)" in r.stdout


def test_trailing_suppression_does_not_hide_the_next_line(tmp_path):
    """A directive trailing code covers its own line only; one alone on its line also covers the
    next line (regression: a trailing one hid the next line's findings too)."""
    (tmp_path / "a.cu").write_text("#include <hip/hip_runtime.h>\n"
                                   "void f() { cudaFree(p); }  // cuda2hip: ignore[HIP101]\n"
                                   "void g() { cudaFree(q); }\n"
                                   "  /* cuda2hip: ignore[HIP101] */\n"
                                   "void h() { cudaFree(r); }\n")
    r = run_cli("check", "--format", "json", "a.cu", cwd=tmp_path)
    got = sorted((x["line"], x["suppressed"]) for x in findings(r) if x["code"] == "HIP101")
    assert got == [(2, True), (3, False), (5, True)], r.stdout


def test_trailing_suppression_in_python_and_cmake(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX CUDA)  # cuda2hip: ignore\n"
        "enable_language(CUDA)\n")
    r = run_cli("check", "--format", "json", "--show-info", "CMakeLists.txt", cwd=tmp_path)
    lines = {x["line"]: x["suppressed"] for x in findings(r)}
    assert lines.get(1) is True and lines.get(2) is False, r.stdout
