"""in_memory.check_text / fix_text (what the language server runs on an editor's text) give what
`check` and `fix` give for the same content on disk: same findings, suppressions, per-file
ignores and baseline; same fixed text. And they never read or write the file at that path."""

from __future__ import annotations

import json

from cuda2hip.engine.engine import Engine
from cuda2hip.project.config import build_settings
from cuda2hip.report import baseline as baselines
from cuda2hip.run.in_memory import check_text, fix_text

from conftest import run_cli

SOURCE = """\
#include <cuda_runtime.h>
#include "local.cuh"
void f(float *p) {
  cudaMalloc(&p, 4);  // cuda2hip: ignore[HIP101]
  cudaMemset(p, 0, 4);
  helper<<<1, 1>>>(p);
  cudaFree(p);
}
"""


def _project(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text('[per-file-ignores]\n"legacy/*.cu" = ["HIP100"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "local.cuh").write_text("__global__ void helper(float *p);\n")
    (tmp_path / "legacy" / "local.cuh").write_text("__global__ void helper(float *p);\n")
    settings = build_settings(None, cwd=tmp_path)
    return settings, Engine(settings)


def _cli_findings(path, cwd, *extra):
    """`check`'s findings of one file, but HIP005: a run's, about the headers it leaves out."""
    got = run_cli("check", "--no-cache", "--format", "json", *extra, path, cwd=cwd)
    assert got.returncode in (0, 1), got.stderr
    return [{k: v for k, v in f.items() if k != "path"} for f in json.loads(got.stdout)["findings"]
            if f["code"] != "HIP005"]


def _findings(result):
    return [{k: v for k, v in f.to_dict().items() if k != "path"} for f in result.findings]


def test_check_text_is_check_on_that_content(tmp_path):
    settings, engine = _project(tmp_path)
    for name in ("main.cu", "legacy/old.cu"):
        path = tmp_path / name
        path.write_text(SOURCE)
        expected = _cli_findings(name, tmp_path)
        path.write_text("// something else on disk\n")  # the text given is what counts
        before = path.read_bytes()
        got = check_text(SOURCE.encode(), path, settings, engine)
        assert got.error is None and _findings(got) == expected
        assert path.read_bytes() == before
    # legacy/: HIP100 ignored; both: the directive suppresses its line and the next
    assert [(f["code"], f["suppressed"]) for f in expected] == [("HIP101", True), ("HIP101", True), ("HIP101", False)]


def test_check_text_with_a_baseline(tmp_path):
    settings, engine = _project(tmp_path)
    path = tmp_path / "main.cu"
    path.write_text(SOURCE)
    assert run_cli("check", "--write-baseline", "b.json", "main.cu", cwd=tmp_path).returncode == 0
    edited = SOURCE.replace("  cudaFree(p);", "  cudaDeviceSynchronize();\n  cudaFree(p);")
    path.write_text(edited)
    expected = _cli_findings("main.cu", tmp_path, "--baseline", "b.json")
    path.write_text(SOURCE)
    got = check_text(edited.encode(), path, settings, engine, baseline=baselines.read(tmp_path / "b.json"))
    assert _findings(got) == expected
    assert [f["message"].split("`")[1] for f in expected if not f["suppressed"]] == ["cudaDeviceSynchronize"]


def test_fix_text_is_fix_on_that_content(tmp_path):
    settings, engine = _project(tmp_path)
    path = tmp_path / "main.cu"
    path.write_text(SOURCE)
    fixed = run_cli("fix", "--no-cache", "--stdout", "main.cu", cwd=tmp_path).stdout
    path.write_text("")
    got = fix_text(SOURCE.encode(), path, settings, engine)
    assert got.changed and got.migrated.decode() == fixed and "  hipFree(p);" in fixed
    assert path.read_text() == ""
    assert check_text(b"x", tmp_path / "notes.txt", settings, engine).error is not None  # not a source type
