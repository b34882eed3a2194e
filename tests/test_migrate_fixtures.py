"""Issue 3, "Done when" 2: a fixture for every library and every launch form migrates (expected
output in fixtures/migrate/expected) and compiles with the real hipcc (HIP 5.2 headers, so every
run uses --target-rocm 5.2 and the output is checked for newer APIs).

What could be compile-checked here: the HIP runtime, driver API, device functions, hipRTC,
hip_complex (libamdhip64-dev), hipRAND, rocRAND, hipSPARSE and rocSPARSE (Debian 12 packages
libhiprand-dev, librocrand-dev, libhipsparse-dev, librocsparse-dev, version 5.3). Debian 12 has no
hipBLAS/rocBLAS, hipFFT, hipSOLVER/rocSOLVER, MIOpen, hipCUB or rocThrust packages: those
fixtures are checked for complete migration (expected output, every CUDA token left has a
finding, no API newer than ROCm 5.2) but not compiled; their compile test skips saying so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from migration_checks import newer_hip_names, unreported_tokens

SRC = FIXTURES / "migrate"
EXPECTED = SRC / "expected"
INCLUDE = Path("/usr/include")

# case -> (input, extra CLI flags, headers the compile needs (None: cannot be compiled here), nvcc-valid)
CASES = {
    "runtime_basic": ("runtime_basic.cu", [], ["hip/hip_runtime.h"], True),
    "driver_api": ("driver_api.cu", [], ["hip/hip_runtime.h"], True),
    "device_functions": ("device_functions.cu", [], ["hip/hip_fp16.h"], True),
    "rtc": ("rtc.cu", [], ["hip/hiprtc.h"], False),  # CUDA 13 here ships no nvrtc.h
    "complex": ("complex.cu", [], ["hip/hip_complex.h"], True),
    "curand": ("curand.cu", [], ["hiprand/hiprand.h", "hiprand/hiprand_kernel.h"], False),
    # rocRAND has no counterpart of curandState_t: the output keeps it (reported), so it cannot compile.
    "curand_roc": ("curand.cu", ["--roc", "--unsafe-fixes"], "leftover", False),
    "cusparse": ("cusparse.cu", [], ["hipsparse/hipsparse.h"], False),
    "cusparse_roc": ("cusparse.cu", ["--roc", "--unsafe-fixes"], ["rocsparse/rocsparse.h"], False),
    "cublas": ("cublas.cu", [], None, False),
    "cublas_roc": ("cublas.cu", ["--roc", "--unsafe-fixes"], None, False),
    "cufft": ("cufft.cu", [], None, False),
    "cusolver": ("cusolver.cu", [], None, False),
    "cusolver_roc": ("cusolver.cu", ["--roc", "--unsafe-fixes"], "leftover", False),
    "cudnn": ("cudnn.cu", [], "leftover", False),  # default profile: reported, nothing to rename to
    "cudnn_roc": ("cudnn.cu", ["--roc", "--unsafe-fixes"], None, False),
    "cub_thrust": ("cub_thrust.cu", [], None, True),
    "launches_keep": ("launches.cu", [], ["hip/hip_runtime.h"], True),
    "launches_hip": ("launches.cu", ["--kernel-launch", "hip"], ["hip/hip_runtime.h"], True),
}
NOT_PACKAGED = ("the ROCm library headers it needs are not packaged in Debian 12 (no hipBLAS/rocBLAS, "
                "hipFFT, hipSOLVER/rocSOLVER, MIOpen, hipCUB, rocThrust); checked for complete migration only")


def _migrate(case: str, tmp_path: Path) -> tuple[Path, list[dict]]:
    name, flags, _headers, _nvcc = CASES[case]
    work = tmp_path / case
    work.mkdir()
    target = work / name
    shutil.copy(SRC / name, target)
    # `fix --format json` reports what remains after fixing.
    fixed = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", "5.2", *flags, "--format", "json", name,
                    cwd=work)
    assert fixed.returncode in (0, 1), fixed.stderr
    return target, [f for f in json.loads(fixed.stdout)["findings"] if not f["fixed"]]


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixture_migrates_completely(case, tmp_path):
    out, findings = _migrate(case, tmp_path)
    data = out.read_bytes()
    assert data.decode() == (EXPECTED / f"{case}.hip").read_text(), f"{case}: migrated output differs"
    defined = {f["message"].split("`")[1] for f in findings if "a name this project defines" in f["message"]}
    assert unreported_tokens(data, findings, frozenset(defined)) == []
    profile = "roc" if "--roc" in CASES[case][1] else "hip"
    assert newer_hip_names(data, "5.2", profile) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixture_compiles_with_hipcc(case, tmp_path, hipcc):
    headers = CASES[case][2]
    if headers is None:
        pytest.skip(f"{case}: {NOT_PACKAGED}")
    if headers == "leftover":
        pytest.skip(f"{case}: the output keeps CUDA names that have no equivalent in this profile (each one "
                    "reported by HIP102); it is not meant to compile")
    missing = [h for h in headers if not (INCLUDE / h).is_file()]
    if missing:
        pytest.skip(f"{case}: {', '.join(missing)} not installed (apt-get install libhiprand-dev librocrand-dev "
                    "libhipsparse-dev librocsparse-dev libamdhip64-dev)")
    src = tmp_path / f"{case}.hip"
    src.write_text((EXPECTED / f"{case}.hip").read_text())
    proc = hipcc(src)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", sorted({c[0] for c in CASES.values() if c[3]}))
def test_fixture_input_is_valid_cuda(name, nvcc):
    proc = nvcc(SRC / name)
    assert proc.returncode == 0, proc.stderr
