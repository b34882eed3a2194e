"""Baseline: `check --write-baseline` records today's findings; `check --baseline` reports only
new ones, matched by fingerprints that survive inserted and removed lines."""

from __future__ import annotations

import json
import os

from conftest import run_cli
from report_helpers import SELECT, copy_project


def _check(project, *args):
    r = run_cli("check", "--isolated", "--select", SELECT, "--format", "json", *args, cwd=project)
    assert r.returncode in (0, 1), r.stderr
    data = json.loads(r.stdout)
    data["findings"] = [f for f in data["findings"] if not f["suppressed"]]
    return data


def _write_baseline(project):
    r = run_cli("check", "--isolated", "--select", SELECT, "--write-baseline", "baseline.json", "src", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "Wrote 14 findings to the baseline" in r.stdout
    return project / "baseline.json"


def test_baseline_survives_inserted_lines(tmp_path):
    project = copy_project(tmp_path)
    _write_baseline(project)
    kernels = project / "src" / "kernels.cu"
    lines = kernels.read_text().splitlines(keepends=True)
    # Lines inserted above every finding and between them; the code itself re-indented.
    lines.insert(0, "// migrated by the GPU team\n\n")
    lines.insert(10, "    int unused = 0;\n    (void)unused;\n")
    lines = [line.replace("    CHECK(cudaMalloc", "        CHECK(cudaMalloc") for line in lines]
    kernels.write_text("".join(lines))
    data = _check(project, "--baseline", "baseline.json", "src")
    assert data["findings"] == []
    assert data["summary"]["baselined"] == 14
    r = run_cli("check", "--isolated", "--select", SELECT, "--baseline", "baseline.json", "src", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "14 in the baseline" in r.stdout


def test_baseline_reports_new_findings_only(tmp_path):
    project = copy_project(tmp_path)
    _write_baseline(project)
    kernels = project / "src" / "kernels.cu"
    text = kernels.read_text()
    # A second, identical line next to a baselined one is new (occurrence index), and so is a
    # new call on a new line.
    text = text.replace("    CHECK(cudaStreamSynchronize(stream));\n",
                        "    CHECK(cudaStreamSynchronize(stream));\n    CHECK(cudaStreamSynchronize(stream));\n"
                        "    cudaDeviceSynchronize();\n")
    kernels.write_text(text)
    data = _check(project, "--baseline", "baseline.json", "src")
    new = [(f["code"], f["line"], f["message"].split("`")[1]) for f in data["findings"]]
    assert new == [("HIP101", 19, "cudaStreamSynchronize"), ("HIP101", 20, "cudaDeviceSynchronize")]
    assert data["summary"]["baselined"] == 14


def test_fixed_finding_leaves_the_baseline_unused_and_changed_line_is_new(tmp_path):
    project = copy_project(tmp_path)
    _write_baseline(project)
    kernels = project / "src" / "kernels.cu"
    kernels.write_text(kernels.read_text()
                       .replace("cudaStream_t stream;", "hipStream_t stream;")  # fixed by hand
                       .replace("CHECK(cudaMalloc(&dev, n * sizeof(float)));",
                                "CHECK(cudaMalloc(&dev, 2 * n * sizeof(float)));"))  # edited line
    data = _check(project, "--baseline", "baseline.json", "src")
    assert [(f["code"], f["line"]) for f in data["findings"]] == [("HIP101", 13)]
    assert data["summary"]["baselined"] == 12


def test_baseline_file_is_readable_and_sorted(tmp_path):
    project = copy_project(tmp_path)
    path = _write_baseline(project)
    data = json.loads(path.read_text())
    assert data["tool"] == "cuda2hip" and data["fingerprint"] == "cuda2hip/v1"
    entries = data["findings"]
    assert len(entries) == 14
    assert entries == sorted(entries, key=lambda e: (e["path"], e["line"], e["code"], e["fingerprint"]))
    assert {e["path"] for e in entries} == {"src/kernels.cu", "src/util.cuh"}  # project-relative
    # Paths are relative to the project root, never the working directory: from src/ the
    # repository root is still the root (all matches), with a configuration at the top too.
    r = run_cli("check", "--isolated", "--select", SELECT, "--baseline", str(path), "kernels.cu", "util.cuh",
                "--format", "json", cwd=project / "src")
    assert r.returncode == 0 and json.loads(r.stdout)["summary"]["baselined"] == 14, r.stdout
    (project / "cuda2hip.toml").write_text('select = ["HIP001", "HIP002", "HIP003", "HIP100", "HIP101", "HIP102"]\n')
    r = run_cli("check", "--baseline", str(path), "kernels.cu", "util.cuh", "--format", "json", cwd=project / "src")
    assert r.returncode == 0, r.stdout
    assert json.loads(r.stdout)["summary"]["baselined"] == 14
    # without a repository either, the root is the folder named: src/ from the top
    import shutil

    shutil.rmtree(project / ".git")
    os.remove(project / "cuda2hip.toml")
    r = run_cli("check", "--isolated", "--select", SELECT, "--baseline", str(path), "src", "--format", "json",
                cwd=project)
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["baselined"] == 0


def test_bad_baseline_is_a_usage_error(tmp_path):
    project = copy_project(tmp_path)
    (project / "b.json").write_text("{not json")
    r = run_cli("check", "--isolated", "--baseline", "b.json", "src", cwd=project)
    assert r.returncode == 2
    assert "b.json: not a baseline" in r.stderr
    r = run_cli("check", "--isolated", "--baseline", "missing.json", "src", cwd=project)
    assert r.returncode == 2
    assert "baseline file not found" in r.stderr
    (project / "other.json").write_text('{"findings": []}')
    r = run_cli("check", "--isolated", "--baseline", "other.json", "src", cwd=project)
    assert r.returncode == 2 and "not a cuda2hip baseline" in r.stderr
