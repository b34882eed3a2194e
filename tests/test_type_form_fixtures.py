"""CUDA whose HIP form differs in type, not in name (HIP134-HIP139): in
fixtures/type_forms/input.cu (valid CUDA, checked with nvcc), after `fix --target-rocm 5.2`, the
lines the real hipcc (HIP 5.2) rejects are exactly the lines `check` reports with a warning or an
error of these rules: the fixed ones (coordinates in min/max, void** casts) compile, the others
(integer handles that HIP makes pointers, __grid_constant__, constexpr math, overloaded addresses) each have a finding at their line.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected output after an intended change.
"""

from __future__ import annotations

import json
import os
import re

from conftest import FIXTURES, run_cli

FIXTURE = FIXTURES / "type_forms"
EXPECTED = FIXTURE / "output-rocm-5.2.hip"
CODES = {"HIP134", "HIP135", "HIP136", "HIP137", "HIP138", "HIP139"}
ERROR_LINE = re.compile(r"^[^:\s]+\.hip:(\d+):\d+: error:", re.M)


def _migrated() -> str:
    proc = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", "5.2", "--stdout", FIXTURE / "input.cu")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def test_input_is_valid_cuda(nvcc):
    proc = nvcc(FIXTURE / "input.cu")
    assert proc.returncode == 0, proc.stderr


def test_output_is_the_expected_migration():
    got = _migrated()
    if os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1":
        EXPECTED.write_text(got)
    assert got == EXPECTED.read_text()


def test_findings_are_exactly_the_lines_hipcc_rejects(tmp_path, hipcc):
    src = tmp_path / "input.hip"
    src.write_text(EXPECTED.read_text())
    check = run_cli("check", "--isolated", "--no-cache", "--target-rocm", "5.2", "--format", "json", src.name,
                    cwd=tmp_path)
    findings = json.loads(check.stdout)["findings"]
    reported = {f["line"] for f in findings if f["code"] in CODES and f["severity"] in ("warning", "error")}
    proc = hipcc(src, "-std=c++17", "-ferror-limit=0")
    assert proc.returncode != 0
    rejected = {int(n) for n in ERROR_LINE.findall(proc.stderr)}
    assert rejected, proc.stderr
    assert reported == rejected, (f"lines with a finding but no error: {sorted(reported - rejected)}; "
                                  f"errors without a finding: {sorted(rejected - reported)}\n{proc.stderr}")
