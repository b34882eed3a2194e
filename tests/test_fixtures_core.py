"""Core fixtures: valid CUDA (nvcc) in, expected HIP out (golden files, the same for every target
release), and the output compiles for an AMD GPU at every ROCm release (7.2, 6.4, 5.2)."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, release_params, run_cli

pytestmark = pytest.mark.rules

# name -> CUDA input (the README's example doubles as the vector-add fixture)
INPUTS = {
    "vector_add": FIXTURES.parent / "examples" / "vector_add" / "vector_add.cu",
    "stream_events": FIXTURES / "core" / "stream_events.cu",
}
CASES = list(INPUTS)


@pytest.mark.parametrize("name", CASES)
def test_input_is_valid_cuda(name, nvcc):
    r = nvcc(INPUTS[name])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name,hipcc", release_params(CASES), indirect=["hipcc"])
def test_fix_matches_expected_and_compiles_with_hipcc(name, tmp_path, hipcc):
    work = tmp_path / f"{name}.cu"
    shutil.copy(INPUTS[name], work)
    r = run_cli("fix", "--target-rocm", hipcc.release, work, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    expected = (FIXTURES / "core" / f"{name}.fixed.cu").read_text()
    assert work.read_text() == expected
    compiled = hipcc(work)
    assert compiled.returncode == 0, compiled.stderr
    # Nothing CUDA-specific is left for the core rules to report.
    assert run_cli("check", "--target-rocm", hipcc.release, work, cwd=tmp_path).returncode == 0
