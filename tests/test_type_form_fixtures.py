"""CUDA whose HIP form differs in type, not in name (HIP134-HIP139): in
fixtures/type_forms/input.cu (valid CUDA, checked with nvcc), after `fix --target-rocm 5.2`, the
lines the real hipcc (HIP 5.2) rejects are exactly the lines `check` reports with a warning or an
error of these rules: the fixed ones (coordinates in min/max, void** casts) compile, the others
(integer handles that HIP makes pointers, __grid_constant__, constexpr math, overloaded addresses) each have a finding at their line.

The same holds for the input migrated for 7.2 and 6.4 and compiled with that release.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected output after an intended change.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, run_cli
from hip_toolchains import MODERN
from migration_checks import assert_findings_are_the_rejected_lines, migrated_fixture

pytestmark = pytest.mark.rules

FIXTURE = FIXTURES / "type_forms"
EXPECTED = FIXTURE / "output-rocm-5.2.hip"
CODES = {"HIP134", "HIP135", "HIP136", "HIP137", "HIP138", "HIP139"}


def test_input_is_valid_cuda(nvcc):
    proc = nvcc(FIXTURE / "input.cu")
    assert proc.returncode == 0, proc.stderr


def test_output_is_the_expected_migration():
    migrated_fixture(run_cli, FIXTURE / "input.cu", EXPECTED)


def test_findings_are_exactly_the_lines_hipcc_rejects(tmp_path, hipcc):
    assert_findings_are_the_rejected_lines(run_cli, hipcc, EXPECTED.read_text(), CODES, tmp_path)


@pytest.mark.parametrize("hipcc", MODERN, indirect=True)
def test_findings_are_exactly_the_lines_the_release_rejects(tmp_path, hipcc):
    """The same promise for the input migrated for 7.2 / 6.4, compiled with that release."""
    migrated = migrated_fixture(run_cli, FIXTURE / "input.cu", target=hipcc.release)
    assert_findings_are_the_rejected_lines(run_cli, hipcc, migrated, CODES, tmp_path)
