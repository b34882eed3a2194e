"""Core fixtures: valid CUDA (nvcc) in, expected HIP out (golden files), and the output compiles
for an AMD GPU with the real hipcc."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, run_cli

CASES = ["vector_add", "stream_events"]


@pytest.mark.parametrize("name", CASES)
def test_input_is_valid_cuda(name, nvcc):
    r = nvcc(FIXTURES / "core" / f"{name}.cu")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", CASES)
def test_fix_matches_expected_and_compiles_with_hipcc(name, tmp_path, hipcc):
    work = tmp_path / f"{name}.cu"
    shutil.copy(FIXTURES / "core" / f"{name}.cu", work)
    r = run_cli("fix", work, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    expected = (FIXTURES / "core" / f"{name}.fixed.cu").read_text()
    assert work.read_text() == expected
    compiled = hipcc(work)
    assert compiled.returncode == 0, compiled.stderr
    # Nothing CUDA-specific is left for the core rules to report.
    assert run_cli("check", work, cwd=tmp_path).returncode == 0


def test_example_in_readme_migrates(tmp_path, hipcc):
    src = FIXTURES.parent / "examples" / "vector_add" / "vector_add.cu"
    r = run_cli("fix", "--stdout", src)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "vector_add.hip"
    out.write_text(r.stdout)
    assert hipcc(out).returncode == 0
