"""Issue 31, point 3: the constructs real code breaks on after migration, each proven the way a
user meets it. For each `fixtures/constructs/NAME.cu`:
- it is valid CUDA: nvcc (CUDA 13) compiles it, in every `#if` branch the file lists on its
  first line (`// variants: -DFOO, -DBAR`);
- `fix` (the default target, ROCm 7.2) gives `expected/NAME.hip`, and `fix` of that changes nothing;
- the output compiles with HIP 7.2 in every variant, or each line the compiler rejects carries a
  warning or error finding of `check` (or sits in the lines of an `#if` a finding says migration
  decides): no silent failure. The lines that fail are listed in the fixture's `// fails:` line,
  so that a construct that starts (or stops) compiling shows;
- where the fixture says `// unsafe: compiles`, `fix --unsafe-fixes` gives output that compiles
  with HIP 7.2 in every variant (the fix of a construct that has no safe one);
- the findings the fixture names in its `// findings: CODE@LINE, ...` line (hazards that compile,
  such as a hard-coded warp size) are reported on the output.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import CUDA_LIBRARY_INCLUDE, FIXTURES, hip_compiler, run_cli

CONSTRUCTS = FIXTURES / "constructs"
CASES = sorted(p.stem for p in CONSTRUCTS.glob("*.cu"))
UPDATE = os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1"
RELEASE = "7.2"
ERROR = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):\d+: error: (?P<text>.*)$", re.M)


def _header(case: str, key: str) -> list[str]:
    """The values of a `// KEY: a, b` comment line of the fixture."""
    for line in (CONSTRUCTS / f"{case}.cu").read_text().splitlines():
        m = re.match(rf"//\s*{key}:\s*(.*)$", line)
        if m:
            return [v.strip() for v in m.group(1).split(",") if v.strip()]
    return []


def _variants(case: str) -> list[list[str]]:
    return [[]] + [[v] for v in _header(case, "variants")]


def _migrate(case: str) -> str:
    proc = run_cli("fix", "--isolated", "--no-cache", "--stdout", CONSTRUCTS / f"{case}.cu")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.mark.parametrize("case", CASES)
def test_input_is_valid_cuda(case, nvcc):
    text = (CONSTRUCTS / f"{case}.cu").read_text()
    if "cublas" in text or "cusolver" in text:
        if not (CUDA_LIBRARY_INCLUDE / "cusolverDn.h").is_file():
            pytest.skip("the CUDA library headers are not fetched")
    for flags in _variants(case):
        proc = nvcc(CONSTRUCTS / f"{case}.cu", "-std=c++17", *flags)
        assert proc.returncode == 0, f"{case} {flags}: {proc.stderr}"


@pytest.mark.parametrize("case", CASES)
def test_migration_gives_expected(case):
    got = _migrate(case)
    expected = CONSTRUCTS / "expected" / f"{case}.hip"
    if UPDATE:
        expected.write_text(got)
    assert got == expected.read_text()


@pytest.mark.parametrize("case", CASES)
def test_second_fix_changes_nothing(case, tmp_path):
    work = tmp_path / f"{case}.hip"
    work.write_text((CONSTRUCTS / "expected" / f"{case}.hip").read_text())
    proc = run_cli("fix", "--isolated", "--no-cache", "--diff", "--exit-zero", work)
    assert proc.returncode == 0, proc.stderr
    assert "+++" not in proc.stdout, proc.stdout


def _findings(path: Path) -> list[dict]:
    proc = run_cli("check", "--isolated", "--no-cache", "--format", "json", "--exit-zero", path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["findings"]


@pytest.mark.parametrize("case", [c for c in CASES if _header(c, "findings")])
def test_expected_findings(case, tmp_path):
    out = tmp_path / f"{case}.hip"
    out.write_text((CONSTRUCTS / "expected" / f"{case}.hip").read_text())
    got = {f"{f['code']}@{f['line']}" for f in _findings(out)}
    assert set(_header(case, "findings")) <= got, sorted(got)


def _predicted_lines(path: Path) -> tuple[set[int], list[tuple[int, int]]]:
    lines, governed = set(), []
    for f in _findings(path):
        if f["severity"] in ("warning", "error") and not f["suppressed"]:
            lines.add(f["line"])
            governs = (f.get("data") or {}).get("governs_lines")
            if governs:
                governed.append((governs[0], governs[1]))
    return lines, governed


@pytest.mark.parametrize("case", CASES)
def test_output_compiles_or_each_failure_is_predicted(case, tmp_path):
    hipcc = hip_compiler(RELEASE)
    out = tmp_path / f"{case}.hip"
    out.write_text((CONSTRUCTS / "expected" / f"{case}.hip").read_text())
    lines, governed = _predicted_lines(out)
    failing = set()
    for flags in _variants(case):
        proc = hipcc(out, "-std=c++17", *flags)
        errors = [(int(m["line"]), m["text"]) for m in ERROR.finditer(proc.stderr) if Path(m["path"]).name == out.name]
        assert proc.returncode == 0 or errors, proc.stderr
        for line, text in errors:
            failing.add(line)
            assert line in lines or any(a <= line <= b for a, b in governed), \
                f"{case} {flags}: silent failure at line {line}: {text}"
    assert sorted(failing) == sorted(int(n) for n in _header(case, "fails")), \
        f"{case}: the lines HIP {RELEASE} rejects changed: {sorted(failing)}"


@pytest.mark.parametrize("case", [c for c in CASES if _header(c, "unsafe") == ["compiles"]])
def test_unsafe_fixes_compile(case, tmp_path):
    hipcc = hip_compiler(RELEASE)
    proc = run_cli("fix", "--isolated", "--no-cache", "--unsafe-fixes", "--stdout", CONSTRUCTS / f"{case}.cu")
    assert proc.returncode in (0, 1), proc.stderr
    out = tmp_path / f"{case}.hip"
    out.write_text(proc.stdout)
    for flags in _variants(case):
        compiled = hipcc(out, "-std=c++17", *flags)
        assert compiled.returncode == 0, f"{case} {flags}: {compiled.stderr}"
