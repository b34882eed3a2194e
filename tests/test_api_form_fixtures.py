"""APIs whose HIP form differs and that have no automatic fix (HIP131-HIP133): in
fixtures/api_forms/input.cu (valid CUDA, checked with nvcc), after `fix --target-rocm 5.2`, the
lines the real hipcc (HIP 5.2) rejects are exactly the lines `check` reports with a warning or an
error of these rules: no failure goes without a finding at its line, and no line that compiles
gets one (a project's struct with CUDA's field names, functions and fields HIP has).

The same holds for the input migrated for 7.2 and 6.4 and compiled with that release.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected output after an intended change.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, run_cli
from migration_checks import assert_findings_are_the_rejected_lines, migrated_fixture

pytestmark = pytest.mark.rules

FIXTURE = FIXTURES / "api_forms"
EXPECTED = FIXTURE / "output-rocm-5.2.hip"
CODES = {"HIP131", "HIP132", "HIP133"}


def test_input_is_valid_cuda(nvcc):
    proc = nvcc(FIXTURE / "input.cu")
    assert proc.returncode == 0, proc.stderr


def test_output_is_the_expected_migration():
    migrated_fixture(run_cli, FIXTURE / "input.cu", EXPECTED)


def test_findings_are_exactly_the_lines_hipcc_rejects(tmp_path, hipcc):
    assert_findings_are_the_rejected_lines(run_cli, hipcc, EXPECTED.read_text(), CODES, tmp_path)


@pytest.mark.parametrize("hipcc", [pytest.param("7.2", marks=pytest.mark.xfail(strict=True, reason=(
    "HIP132 at 7.2 (its forms data stops at 6.4): cooperative groups' thread_block/coalesced_group "
    "num_threads() and thread_block_tile ballot() are reported missing, and HIP 7.2 declares them"))), "6.4"],
    indirect=True)
def test_findings_are_exactly_the_lines_the_release_rejects(tmp_path, hipcc):
    """The same promise for the input migrated for 7.2 / 6.4, compiled with that release."""
    migrated = migrated_fixture(run_cli, FIXTURE / "input.cu", target=hipcc.release)
    assert_findings_are_the_rejected_lines(run_cli, hipcc, migrated, CODES, tmp_path)
