"""bench/realworld/report.py: the table of all releases side by side, and the results JSON of a
three-release run and of a run made before there were three (read as 5.2's)."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from realworld import report  # noqa: E402
from realworld.harness import CodebaseResult, Failure  # noqa: E402


def _result(name: str, release: str, compiled: int, predicted: int, silent: int) -> CodebaseResult:
    failures = [Failure(f"u{i}.cu", "a.cu:1: error", "a.cu:1", "HIP102 at a.cu:1") for i in range(predicted)]
    failures += [Failure(f"s{i}.cu", "a.cu:2: error", "a.cu:2") for i in range(silent)]
    return CodebaseResult(name, release, units=12, nvcc_valid=10, compiled=compiled, failures=failures)


def test_combined_table_has_every_release_and_totals():
    by_release = {"7.2": [_result("cupy", "7.2", 9, 1, 0), _result("samples", "7.2", 5, 3, 2)],
                  "5.2": [_result("cupy", "5.2", 8, 2, 0), _result("samples", "5.2", 7, 3, 0)]}
    lines = report.combined_table(by_release).splitlines()
    assert lines[0] == ("| code base | units | nvcc-valid | 7.2: compile | 7.2: predicted | 7.2: silent "
                        "| 5.2: compile | 5.2: predicted | 5.2: silent |")
    assert lines[2] == "| cupy | 12 | 10 | 9 (90%) | 1 | 0 | 8 (80%) | 2 | 0 |"
    assert lines[3] == "| samples | 12 | 10 | 5 (50%) | 3 | 2 | 7 (70%) | 3 | 0 |"
    assert lines[4] == "| **all** | 24 | 20 | 14 (70%) | 4 | 2 | 15 (75%) | 5 | 0 |"


def test_results_json_round_trips_per_release():
    by_release = {"7.2": [_result("cupy", "7.2", 9, 1, 0)], "6.4": [_result("cupy", "6.4", 8, 1, 1)]}
    toolchains = {"7.2": {"describe": "HIP 7.2.4 / clang 22.1.8"}, "6.4": {"describe": "HIP 6.4.3 / clang 21.1.8"}}
    data = report.to_json("x", {"tool_rev": "abc"}, by_release, toolchains)
    assert data["releases"]["6.4"]["toolchain"]["describe"] == "HIP 6.4.3 / clang 21.1.8"
    assert data["releases"]["6.4"]["codebases"][0]["silent"] == 1
    assert report.from_json(data) == by_release


def test_a_single_release_record_is_its_targets():
    old = {"label": "final", "target_rocm": "5.2",
           "codebases": [{"name": "cupy", "units": 32, "nvcc_valid": 31, "compiled": 28, "predicted": 3,
                          "silent": 0, "failures": [{"unit": "a.cu", "first_error": "e", "location": "",
                                                     "predicted_by": "HIP102 at a.cu:1", "output": ""}]}]}
    (cupy,) = report.from_json(old)["5.2"]
    assert (cupy.release, cupy.compiled, cupy.predicted, cupy.silent) == ("5.2", 28, 1, 0)
