"""The output conventions ruff users expect: --exit-zero, -q / --quiet, --show-fixes,
--min-severity / --show-info (infos summarised in one line by default), and the per-API CSV."""

from __future__ import annotations

import csv
import io
import json

from conftest import run_cli
from report_helpers import SELECT, copy_project

BASE = ("--isolated", "--select", SELECT)


def test_exit_zero_keeps_errors_at_2(tmp_path):
    project = copy_project(tmp_path)
    assert run_cli("check", *BASE, ".", cwd=project).returncode == 1
    r = run_cli("check", *BASE, "--exit-zero", ".", cwd=project)
    assert r.returncode == 0 and "14 findings found" in r.stdout
    r = run_cli("fix", *BASE, "--diff", "--exit-zero", "src", cwd=project)
    assert r.returncode == 0 and "+#include <hip/hip_runtime.h>" in r.stdout
    (project / "src" / "bad.cu").write_bytes("x".encode("utf-16"))
    assert run_cli("check", *BASE, "--exit-zero", ".", cwd=project).returncode == 2
    assert run_cli("check", *BASE, "--exit-zero", "--select", "NOPE", ".", cwd=project).returncode == 2


def test_quiet_prints_findings_only_and_nothing_on_success(tmp_path):
    project = copy_project(tmp_path)
    r = run_cli("check", *BASE, "-q", "src/clean.cu", cwd=project)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    for fmt in ("text", "concise", "github"):
        r = run_cli("check", *BASE, "--quiet", "--format", fmt, "src/clean.cu", cwd=project)
        assert (r.returncode, r.stdout) == (0, ""), fmt
    r = run_cli("check", *BASE, "-q", ".", cwd=project)
    assert r.returncode == 1 and "HIP102" in r.stdout and "findings found" not in r.stdout
    concise = run_cli("check", *BASE, "-q", "--format", "concise", ".", cwd=project).stdout.splitlines()
    assert len(concise) == 14 and all(":" in line and "HIP" in line for line in concise)
    # fix -q: what remains, no summary; nothing when nothing remains.
    r = run_cli("fix", *BASE, "-q", "src/util.cuh", cwd=project)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = run_cli("fix", "--isolated", "--select", "HIP101", "-q", "--output-dir", "out", "src", cwd=project)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert (project / "out" / "kernels.cu").is_file()


def test_show_fixes(tmp_path):
    project = copy_project(tmp_path)
    out = run_cli("check", *BASE, "--show-fixes", "src/kernels.cu", cwd=project).stdout
    assert "  = fix: Rename to `hipStream_t`\n    -     cudaStream_t stream;\n    +     hipStream_t stream;\n" in out
    plain = run_cli("check", *BASE, "src/kernels.cu", cwd=project).stdout
    assert "  = fix: Rename to `hipStream_t`\n" in plain and "+     hipStream_t stream;" not in plain
    r = run_cli("fix", *BASE, "--show-fixes", "src", cwd=project)
    assert r.returncode == 1
    listed = r.stdout[r.stdout.index("Fixed 11 findings:"):].splitlines()
    assert listed[:7] == ["Fixed 11 findings:", "- src/kernels.cu:", "    6 × HIP101 (cuda-runtime-api)",
                          "    1 × HIP001 (unused-suppression)", "    1 × HIP100 (cuda-runtime-headers)",
                          "- src/util.cuh:", "    3 × HIP101 (cuda-runtime-api)"]
    (project / "src" / "esc.cu").write_text("cudaEvent_t e; /* \x1b[2J */\n")
    out = run_cli("check", *BASE, "--show-fixes", "src/esc.cu", cwd=project).stdout
    edits = [line for line in out.splitlines() if line.startswith(("    - ", "    + "))]
    assert edits == ["    - cudaEvent_t e; /* \\x1b[2J */", "    + hipEvent_t e; /* \\x1b[2J */"]  # no terminal escape
    project = copy_project(tmp_path / "again")
    r = run_cli("fix", *BASE, "--diff", "--show-fixes", "--format", "concise", "src", cwd=project)
    assert "Would fix 11 findings:" in r.stderr  # --diff prints the report on stderr


def _info_project(tmp_path):
    project = copy_project(tmp_path)
    (project / "src" / "strings.cu").write_text('const char* a = "cudaMalloc failed";\ncudaStream_t s;\n')
    return project


SELECT_INFO = ("--isolated", "--select", "HIP101,HIP191")


def test_infos_are_summarised_in_one_line_unless_asked_for(tmp_path):
    project = _info_project(tmp_path)
    text = run_cli("check", *SELECT_INFO, "src/strings.cu", cwd=project).stdout
    assert "HIP191" not in text and "HIP101" in text
    assert text.splitlines()[-1] == "1 info finding not shown (`--min-severity info` lists it)."
    assert "2 findings found (1 warning, 1 info)" in text  # the summary counts everything
    for args in (("--show-info",), ("--min-severity", "info"), ("--min-severity", "hint")):
        shown = run_cli("check", *SELECT_INFO, *args, "src/strings.cu", cwd=project).stdout
        assert "HIP191" in shown and "not shown" not in shown, args
    concise = run_cli("check", *SELECT_INFO, "--format", "concise", "src/strings.cu", cwd=project).stdout.splitlines()
    assert len(concise) == 2 and concise[1].startswith("1 info finding not shown")
    r = run_cli("check", *SELECT_INFO, "--min-severity", "error", "--format", "concise", "src/strings.cu", cwd=project)
    assert r.returncode == 1  # the exit status follows --fail-on, not what is listed
    assert r.stdout.splitlines() == ["1 warning and 1 info findings not shown (`--min-severity info` lists them)."]
    gitlab = json.loads(run_cli("check", *SELECT_INFO, "--format", "gitlab", "src/strings.cu", cwd=project).stdout)
    assert [i["check_name"] for i in gitlab] == ["HIP101"]
    junit = run_cli("check", *SELECT_INFO, "--format", "junit", "--show-info", "src/strings.cu", cwd=project).stdout
    assert "HIP191" in junit
    # JSON and SARIF keep every finding.
    data = json.loads(run_cli("check", *SELECT_INFO, "--format", "json", "src/strings.cu", cwd=project).stdout)
    assert sorted(f["code"] for f in data["findings"]) == ["HIP101", "HIP191"]
    sarif = json.loads(run_cli("check", *SELECT_INFO, "--format", "sarif", "src/strings.cu", cwd=project).stdout)
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == ["HIP101", "HIP191"]


def _csv(text: str) -> dict[str, dict]:
    return {row["cuda_api"]: row for row in csv.DictReader(io.StringIO(text))}


def test_api_csv_counts_uses_converted_and_left(tmp_path):
    project = copy_project(tmp_path)
    (project / "src" / "more.cu").write_text("cudaStream_t a; cudaStream_t b;\n"
                                             "void f() { cudaStream_t c; }  // cuda2hip: ignore[HIP101]\n")
    r = run_cli("check", *BASE, "--format", "api-csv", "src", cwd=project)
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines()[0] == "cuda_api,library,hip_api,uses,converted,left,open_findings,why"
    rows = _csv(r.stdout)
    assert rows["cudaStream_t"] | {} == {
        "cuda_api": "cudaStream_t", "library": "runtime", "hip_api": "hipStream_t", "uses": "4", "converted": "3",
        "left": "1", "open_findings": "0", "why": "suppressed"}
    assert rows["cudaDeviceFlushGPUDirectRDMAWrites"]["why"] == "no HIP equivalent"
    assert (rows["cudaDeviceFlushGPUDirectRDMAWrites"]["converted"], rows["cudaDeviceFlushGPUDirectRDMAWrites"]["left"]) == ("0", "1")
    order = [(-int(r["left"]), -int(r["open_findings"]), -int(r["uses"]), r["cuda_api"]) for r in rows.values()]
    assert order == sorted(order) and list(rows)[0] == "cudaStream_t"  # most left first, then most used
    # Every use the name-table rules report is a row's use: the numbers add up to the JSON's.
    data = json.loads(run_cli("check", *BASE, "--format", "json", "src", cwd=project).stdout)
    named = [f for f in data["findings"] if f["code"] in ("HIP101", "HIP102")]
    assert sum(int(r["uses"]) for r in rows.values()) == len(named)
    # `fix --report x.csv`: converted is what the rewrite applied.
    r = run_cli("fix", *BASE, "--report", "apis.csv", "src", cwd=project)
    fixed = _csv((project / "apis.csv").read_text())
    assert (fixed["cudaStream_t"]["converted"], fixed["cudaStream_t"]["left"]) == ("3", "1")
    assert sum(int(r["converted"]) for r in fixed.values()) == 11  # the HIP101 renames applied


def test_api_csv_unsafe_fixes_and_other_rules(tmp_path):
    """A rename whose fix is unsafe is left with that reason unless --unsafe-fixes; another
    rule's open finding on a converted name shows in open_findings and why. At ROCm 5.2, whose
    hipBLAS declares `hipblasStrsmBatched` with other pointer types than cuBLAS (from 6.4 the
    same: a safe rename)."""
    (tmp_path / "k.cu").write_text(
        "#include <cuda_runtime.h>\n#include <cublas_v2.h>\n"
        "void f(cudaGraphExec_t e, cudaGraph_t g) { cudaGraphExecUpdateResultInfo info;\n"
        "  cudaGraphExecUpdate(e, g, &info); }\n"
        "void h(cublasHandle_t b, const float** A, float** B) {\n"
        "  cublasStrsmBatched(b, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,\n"
        "                     4, 4, nullptr, A, 4, B, 4, 1); }\n")
    rows = _csv(run_cli("check", "--isolated", "--target-rocm", "5.2", "--format", "api-csv", "k.cu",
                        cwd=tmp_path).stdout)
    update = rows["cudaGraphExecUpdate"]
    assert update["hip_api"] == "hipGraphExecUpdate" and update["left"] == "0"
    assert update["open_findings"] == "1" and "HIP131 argument-count-differs" in update["why"]
    trsm = rows["cublasStrsmBatched"]
    assert (trsm["uses"], trsm["converted"], trsm["left"]) == ("1", "0", "1")
    assert trsm["why"] == "unsafe fix not applied (review it; `--unsafe-fixes`)"
    (tmp_path / "cuda2hip.toml").write_text('unsafe-fixes = true\ntarget-rocm = "5.2"\n')  # what `fix` then applies
    rows = _csv(run_cli("check", "--format", "api-csv", "k.cu", cwd=tmp_path).stdout)
    assert (rows["cublasStrsmBatched"]["converted"], rows["cublasStrsmBatched"]["left"]) == ("1", "0")
