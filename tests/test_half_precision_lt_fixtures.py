"""Issue 12, bf16 / fp16 / cuBLASLt (fixtures/migrate/{bf16,fp16,cublaslt}.cu, migrated and compiled by
test_migrate_fixtures.py): at --target-rocm 5.2, where HIP has neither hip/hip_bf16.h nor hipBLASLt,
every CUDA bf16 and cuBLASLt name and include the output keeps has a finding at its place; and the
compile checks against the newer releases' headers can fail (negative controls).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import FETCH_RELEASE_HEADERS, FIXTURES, RELEASE_HEADERS, ROOT, run_cli
from migration_checks import release_errors

pytestmark = pytest.mark.rules

SRC = FIXTURES / "migrate"
EXPECTED = SRC / "expected"


def _bf16_family() -> set[str]:
    """The CUDA names of the __nv_bfloat16 family (tools/data/mappings.yaml)."""
    entries = yaml.safe_load((ROOT / "tools" / "data" / "mappings.yaml").read_text(encoding="utf-8"))
    return {name for e in entries if "hip_bf16.h" in e["why"] for name in e["names"]}


def _findings(path: Path, target: str, tmp_path: Path) -> list[dict]:
    """`check` of a file (the migrated output: what it keeps must still be reported)."""
    shutil.copy(path, tmp_path / path.name)
    proc = run_cli("check", "--isolated", "--no-cache", "--target-rocm", target, "--format", "json", path.name,
                   cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


def _uses(text: str, names) -> list[tuple[int, int, str]]:
    """(line, column, name) of every whole-word occurrence of `names` in code (not in comments or
    include lines)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        code = "" if line.startswith("#include") else line.split("//", 1)[0]
        for m in re.finditer(r"[A-Za-z_]\w*", code):
            if m.group() in names:
                out.append((n, m.start() + 1, m.group()))
    return out


@pytest.mark.parametrize("name, header, needs", [
    ("bf16.hip", "cuda_bf16.h", "ROCm 5.7"),
    ("cublaslt.hip", "cublasLt.h", "ROCm 5.5"),
])
def test_at_rocm_5_2_the_include_and_every_use_are_reported(name, header, needs, tmp_path):
    expected = (EXPECTED / name).read_text()
    family = _bf16_family() if name == "bf16.hip" else {w for w in re.findall(r"\w+", expected)
                                                        if w.lower().startswith("cublaslt")}
    assert family, name
    findings = _findings(EXPECTED / name, "5.2", tmp_path)
    at = {(f["line"], f["column"]): f for f in findings if f["severity"] in ("warning", "error")}
    include = next(n for n, line in enumerate(expected.splitlines(), 1) if f"<{header}>" in line)
    assert "#include <hip/hip_bf16.h>" not in expected and "#include <hipblaslt/" not in expected
    got = [f for (line, _c), f in at.items() if line == include]
    assert got and needs in got[0]["message"] and "not rewritten" in got[0]["message"], findings
    uses = _uses(expected, family)
    assert len(uses) >= 10, uses
    missing = [u for u in uses if (u[0], u[1]) not in at]
    assert not missing, f"{name}: uses kept without a finding at their place: {missing}"
    assert all("needs ROCm" in at[(u[0], u[1])]["message"] for u in uses), [at[(u[0], u[1])] for u in uses]


def _release_include(suite: str, header: str) -> Path:
    inc = RELEASE_HEADERS / suite / "usr" / "include"
    if not (inc / header).is_file():
        pytest.skip(f"{header} not in Debian {suite}'s fetched headers ({FETCH_RELEASE_HEADERS})")
    return inc


@pytest.mark.parametrize("suite, expected, header, old, new", [
    # a bf16 type left as CUDA spells it, against sid's HIP 6.4 headers (with their known header error)
    ("sid", "bf16_rocm6.4.hip", "hip/hip_bf16.h", "__hip_bfloat16 a", "__nv_bfloat16 a"),
    # a cuBLASLt function left in place, against sid's HIP 6.4 + hipBLASLt 7.1
    ("sid", "cublaslt_rocm6.4.hip", "hipblaslt/hipblaslt.h", "hipblasLtCreate(", "cublasLtCreate("),
])
def test_newer_release_compile_check_is_not_vacuous(suite, expected, header, old, new, tmp_path, hipcc):
    inc = _release_include(suite, header)
    text = (EXPECTED / expected).read_text()
    assert old in text
    good = tmp_path / "good.hip"
    good.write_text(text)
    bad = tmp_path / "bad.hip"
    bad.write_text(text.replace(old, new, 1))
    for src, broken in ((good, False), (bad, True)):
        proc = hipcc(src, f"-I{inc}", "-std=c++17", "-fno-spell-checking", "-ferror-limit=0")
        own, unknown = release_errors(proc.stderr, src, inc)
        if unknown:
            pytest.skip(f"this hipcc cannot compile Debian {suite}'s headers: {unknown[0]}")
        assert bool(own) == broken, proc.stderr
        if broken:
            assert new.rstrip("( a") in own[0]
