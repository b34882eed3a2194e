"""Issue 3, "Done when" 2: a fixture for every library and every launch form migrates (expected
output in fixtures/migrate/expected) and compiles with the real hipcc (HIP 5.2 headers, so every
run uses --target-rocm 5.2 and the output is checked for newer APIs). Issue 13: every library
fixture does so in both library profiles (hip and --roc), or keeps exactly the names its profile has
no equivalent for (reported, and the only compile errors).

Where the headers come from: the HIP runtime, driver API, device functions, hipRTC and hip_complex
from libamdhip64-dev; hipRAND, rocRAND, hipSPARSE and rocSPARSE from their Debian 12 packages. Debian
12 has no hipBLAS/rocBLAS, hipFFT, hipSOLVER/rocSOLVER, hipCUB/rocPRIM/rocThrust or MIOpen packages:
tests/harness/fetch_rocm_library_headers.sh extracts the headers of Debian 13's (MIOpen: sid's)
packages into .cache/rocm-library-headers (tools/install-test-deps.sh does this), and those fixtures compile against
them with Debian 12's hipcc. Likewise every input is proven valid CUDA with nvcc 13 before it is
migrated; the CUDA library headers the toolkit here lacks (cuBLAS, cuRAND, cuFFT, cuSPARSE,
cuSOLVER, cuDNN, NVRTC) come from NVIDIA's PyPI wheels (tests/harness/fetch_cuda_library_headers.py).
Without a fetched tree, the tests that need it skip saying so.

Issue 12: bf16, fp16 and cuBLASLt. HIP 5.2 has no hip/hip_bf16.h and no hipBLASLt, so at 5.2 those
fixtures keep their CUDA include and names (reported at the include and at every use) and the compile
fails on exactly the missing header. At a newer target they are migrated and compiled with the same
hipcc (clang 15) against the HIP/ROCm headers of the Debian release that has them
(tests/harness/fetch_rocm_release_headers.py): sid's HIP 6.4 (with hipBLASLt 7.1, sid's) has one
function body clang 15 cannot compile (KNOWN_HEADER_ERRORS), which is tolerated: every error in the
fixture itself still fails the test.

The golden files of the 5.2 cases are HIP 5.2's. Each of those sources is also migrated with
`--target-rocm 7.2` and `6.4` and compiled with that release's own toolchain
(tests/harness/hip_toolchains.py): it builds, or fails only on the names `fix` reports it keeps.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import (CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, FETCH_RELEASE_HEADERS, FETCH_ROCM_HEADERS, FIXTURES,
                      INSTALL_TEST_DEPS, RELEASE_HEADERS, ROCM_LIBRARY_INCLUDE, release_params, run_cli)
from hip_toolchains import MODERN
from migration_checks import ERROR_AT, newer_hip_names, release_errors, unreported_tokens

pytestmark = pytest.mark.rules

SRC = FIXTURES / "migrate"
EXPECTED = SRC / "expected"
SYSTEM_INCLUDE = Path("/usr/include")
ROC = ["--roc", "--unsafe-fixes"]


class Case(NamedTuple):
    source: str
    flags: list[str]  # extra `cuda2hip fix` flags
    headers: list[str]  # headers the compile needs
    cuda_headers: tuple[str, ...]  # CUDA library headers the input needs beyond the toolkit's
    compile_flags: tuple[str, ...] = ()
    # CUDA names (and headers) the output keeps because its profile has no equivalent at ROCm 5.2,
    # each reported: the compile must fail on exactly these and nothing else
    leftover: tuple[str, ...] = ()
    expected: str | None = None  # the expected output of another case (the profiles agree)
    target: str = "5.2"  # --target-rocm
    # the Debian suite whose fetched HIP/ROCm headers the compile puts first (None: the installed HIP 5.2)
    release: str | None = None


CASES = {
    "runtime_basic": Case("runtime_basic.cu", [], ["hip/hip_runtime.h"], ()),
    # kernels HIP takes as const void*, CUDA default arguments HIP lacks (HIP130, HIP131)
    "api_forms": Case("api_forms.cu", [], ["hip/hip_runtime.h"], (), ("-std=c++17",)),
    "driver_api": Case("driver_api.cu", [], ["hip/hip_runtime.h"], ()),
    "device_functions": Case("device_functions.cu", [], ["hip/hip_fp16.h"], ()),
    "rtc": Case("rtc.cu", [], ["hip/hiprtc.h"], ("nvrtc.h",)),
    "complex": Case("complex.cu", [], ["hip/hip_complex.h"], ()),
    "complex_roc": Case("complex.cu", ROC, ["hip/hip_complex.h"], (), expected="complex"),
    # hipRAND's headers include rocRAND's (Debian's libhiprand-dev does not pull librocrand-dev in).
    "curand": Case("curand.cu", [], ["hiprand/hiprand.h", "hiprand/hiprand_kernel.h", "rocrand/rocrand.h"],
                   ("curand.h", "curand_kernel.h")),
    "curand_roc": Case("curand.cu", ROC, ["rocrand/rocrand.h", "rocrand/rocrand_kernel.h"], ("curand.h", "curand_kernel.h")),
    "cusparse": Case("cusparse.cu", [], ["hipsparse/hipsparse.h"], ("cusparse.h",)),
    "cusparse_roc": Case("cusparse.cu", ROC, ["rocsparse/rocsparse.h"], ("cusparse.h",)),
    "cublas": Case("cublas.cu", [], ["hipblas/hipblas.h"], ("cublas_v2.h",)),
    "cublas_roc": Case("cublas.cu", ROC, ["rocblas/rocblas.h"], ("cublas_v2.h",)),
    # hipBLAS's complex functions on hipComplex (`hipblasCgemm_v2`, ...) need ROCm 6.0; before, they
    # take hipBLAS's own hipblasComplex.
    "cublas_complex": Case("cublas_complex.cu", [], ["hipblas/hipblas.h"], ("cublas_v2.h",),
                           leftover=("cublasCgemm", "cublasZaxpy")),
    "cublas_complex_roc": Case("cublas_complex.cu", ROC, ["rocblas/rocblas.h"], ("cublas_v2.h",)),
    "cufft": Case("cufft.cu", [], ["hipfft/hipfft.h"], ("cufft.h",)),
    "cufft_roc": Case("cufft.cu", ROC, ["hipfft/hipfft.h"], ("cufft.h",), expected="cufft"),  # no rocFFT mapping
    "cusolver": Case("cusolver.cu", [], ["hipsolver/hipsolver.h"], ("cusolverDn.h",)),
    # rocSOLVER's getrf allocates its own workspace: no `_bufferSize` query, no workspace parameter.
    "cusolver_roc": Case("cusolver.cu", ROC, ["rocsolver/rocsolver.h"], ("cusolverDn.h",),
                         leftover=("cusolverDnSgetrf_bufferSize", "cusolverDnSgetrf")),
    # hipDNN (HIPIFY's target) has no ROCm release: the default profile keeps cuDNN (MIOpen with --roc).
    "cudnn": Case("cudnn.cu", [], [], ("cudnn.h",), leftover=("cudnn.h",)),
    "cudnn_roc": Case("cudnn.cu", ROC, ["miopen/miopen.h"], ("cudnn.h",)),
    # rocPRIM (under hipCUB and rocThrust) requires C++14; Debian's hipcc defaults to an older standard.
    "cub_thrust": Case("cub_thrust.cu", [], ["hipcub/hipcub.hpp", "thrust/device_vector.h"], (),
                       ("-std=c++17",)),
    "cub_thrust_roc": Case("cub_thrust.cu", ROC, ["hipcub/hipcub.hpp", "thrust/device_vector.h"], (),
                           ("-std=c++17",), expected="cub_thrust"),
    # hip/hip_bf16.h and hipBLASLt need a newer ROCm than 5.2: reported, and the include is the only error
    "bf16": Case("bf16.cu", [], ["hip/hip_runtime.h"], (), leftover=("cuda_bf16.h",)),
    "bf16_rocm6.4": Case("bf16.cu", [], ["hip/hip_bf16.h"], (), target="6.4", release="sid"),
    "fp16": Case("fp16.cu", [], ["hip/hip_fp16.h"], ()),
    "cublaslt": Case("cublaslt.cu", [], ["hip/hip_runtime.h"], ("cublasLt.h",), leftover=("cublasLt.h",)),
    # Debian sid (the 6.4 platform) packages hipBLASLt 7.1
    "cublaslt_rocm6.4": Case("cublaslt.cu", [], ["hipblaslt/hipblaslt.h"], ("cublasLt.h",), ("-std=c++17",),
                             target="6.4", release="sid"),
    "launches_keep": Case("launches.cu", [], ["hip/hip_runtime.h"], ()),
    "launches_hip": Case("launches.cu", ["--kernel-launch", "hip"], ["hip/hip_runtime.h"], ()),
}


def _migrate(case: str, tmp_path: Path) -> tuple[Path, list[dict]]:
    name, flags = CASES[case].source, CASES[case].flags
    work = tmp_path / case
    work.mkdir()
    target = work / name
    shutil.copy(SRC / name, target)
    # `fix --format json` reports what remains after fixing.
    fixed = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", CASES[case].target, *flags, "--format", "json",
                    name, cwd=work)
    assert fixed.returncode in (0, 1), fixed.stderr
    return target, [f for f in json.loads(fixed.stdout)["findings"] if not f["fixed"]]


def _expected(case: str) -> Path:
    return EXPECTED / f"{CASES[case].expected or case}.hip"


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixture_migrates_completely(case, tmp_path):
    out, findings = _migrate(case, tmp_path)
    data = out.read_bytes()
    assert data.decode() == _expected(case).read_text(), f"{case}: migrated output differs"
    defined = {f["message"].split("`")[1] for f in findings if "a name this project defines" in f["message"]}
    assert unreported_tokens(data, findings, frozenset(defined)) == []
    profile = "roc" if "--roc" in CASES[case].flags else "hip"
    assert newer_hip_names(data, CASES[case].target, profile) == []
    # what the output keeps is reported, each with the reason
    kept = {f["message"].split("`")[1] for f in findings if not f["fixed"] and f["message"].startswith("`")}
    assert set(CASES[case].leftover) <= kept, f"{case}: {set(CASES[case].leftover) - kept} kept unreported"


def _include_dir(header: str, release: str | None = None) -> Path | None:
    for root in (RELEASE_HEADERS / release / "usr" / "include",) if release else (SYSTEM_INCLUDE, ROCM_LIBRARY_INCLUDE):
        if (root / header).is_file():
            return root
    return None




# the only errors a kept CUDA name may cause (spell checking off: no follow-up errors on a guess)
_LEFTOVER_ERROR = re.compile(r"error: (?:use of undeclared identifier|unknown type name) '(\w+)'|"
                             r"fatal error: '([\w./]+)' file not found")


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixture_compiles_with_hipcc(case, tmp_path, hipcc):
    spec = CASES[case]
    roots = {h: _include_dir(h, spec.release) for h in spec.headers}
    missing = [h for h, root in roots.items() if root is None]
    if missing and spec.release:
        pytest.skip(f"{case}: {', '.join(missing)} not in Debian {spec.release}'s fetched headers "
                    f"({RELEASE_HEADERS}; {FETCH_RELEASE_HEADERS})")
    if missing:
        pytest.skip(f"{case}: {', '.join(missing)} not found in {SYSTEM_INCLUDE} or {ROCM_LIBRARY_INCLUDE} "
                    f"(apt-get install libamdhip64-dev libhiprand-dev librocrand-dev libhipsparse-dev "
                    f"librocsparse-dev; the other ROCm libraries: {FETCH_ROCM_HEADERS}; both: {INSTALL_TEST_DEPS})")
    src = tmp_path / f"{case}.hip"
    src.write_text(_expected(case).read_text())
    extra = [f"-I{root}" for root in sorted(set(roots.values())) if root != SYSTEM_INCLUDE]
    proc = hipcc(src, *extra, *spec.compile_flags, "-fno-spell-checking", "-ferror-limit=0")
    if spec.release:
        own, unknown = release_errors(proc.stderr, src, RELEASE_HEADERS / spec.release / "usr" / "include")
        assert not own, f"{case}: the migrated output does not compile against Debian {spec.release}'s headers:\n" + \
            "\n".join(own)
        if unknown:
            pytest.skip(f"{case}: this hipcc (clang 15) cannot compile Debian {spec.release}'s headers: {unknown[0]}")
        assert proc.returncode == 0 or ERROR_AT.search(proc.stderr), proc.stderr
        return
    if not spec.leftover:
        assert proc.returncode == 0, proc.stderr
        return
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert proc.returncode != 0 and errors, f"{case}: compiles although it keeps {spec.leftover}"
    named = [_LEFTOVER_ERROR.search(line) for line in errors]
    assert all(named), f"{case}: errors other than the kept names:\n" + "\n".join(
        line for line, m in zip(errors, named) if not m)
    assert {m.group(1) or m.group(2) for m in named} == set(spec.leftover), proc.stderr


# The golden files above are 5.2's (or a named release's, compiled with clang 15 against its headers).
# Each source is also migrated for 7.2 and 6.4 and compiled with that release's own toolchain: it
# builds, or fails only on the names `fix` reported it keeps.
AT_MODERN = sorted(c for c, spec in CASES.items() if spec.target == "5.2")
MODERN_GAPS = {
    ("cusparse_roc", "7.2"): "--roc cusparseCbsrmv -> rocsparse_cbsrmv: rocSPARSE 3 (ROCm 6.0) added a "
                             "rocsparse_mat_info parameter (16 arguments), the rewrite passes 15",
    ("cusparse_roc", "6.4"): "--roc cusparseCbsrmv -> rocsparse_cbsrmv: rocSPARSE 3 (ROCm 6.0) added a "
                             "rocsparse_mat_info parameter (16 arguments), the rewrite passes 15",
}


@pytest.mark.parametrize("case,hipcc", release_params(AT_MODERN, MODERN_GAPS, MODERN), indirect=["hipcc"])
def test_fixture_migrated_for_the_release_compiles(case, tmp_path, hipcc):
    spec = CASES[case]
    work = tmp_path / case
    work.mkdir()
    shutil.copy(SRC / spec.source, work / spec.source)
    fixed = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", hipcc.release, *spec.flags, "--format", "json",
                    spec.source, cwd=work)
    assert fixed.returncode in (0, 1), fixed.stderr
    kept = {f["message"].split("`")[1] for f in json.loads(fixed.stdout)["findings"]
            if not f["fixed"] and f["message"].startswith("`")}
    src = work / f"{case}.hip"
    src.write_text((work / spec.source).read_text())
    proc = hipcc(src, *spec.compile_flags, "-fno-spell-checking", "-ferror-limit=0")
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    if not kept:
        assert proc.returncode == 0, proc.stderr
        return
    named = [_LEFTOVER_ERROR.search(line) for line in errors]
    assert all(named) and {m.group(1) or m.group(2) for m in named} <= kept, \
        f"{case}: errors other than the kept names {sorted(kept)}:\n{proc.stderr}"


def test_library_compile_check_is_not_vacuous(tmp_path, hipcc):
    """Negative control: with the fetched headers on the path, a CUDA library name left in the
    migrated hipBLAS fixture is still a compile error."""
    if _include_dir("hipblas/hipblas.h") is None:
        pytest.skip(f"hipBLAS headers not fetched ({FETCH_ROCM_HEADERS})")
    text = (EXPECTED / "cublas.hip").read_text()
    assert "hipblasCreate(" in text
    src = tmp_path / "broken.hip"
    src.write_text(text.replace("hipblasCreate(", "cublasCreate(", 1))
    proc = hipcc(src, f"-I{ROCM_LIBRARY_INCLUDE}")
    assert proc.returncode != 0 and "cublasCreate" in proc.stderr


def test_roc_compile_check_is_not_vacuous(tmp_path, hipcc):
    """Negative control (and the defect of issue 13): without the conversions of its complex
    arguments, the rocBLAS call of the migrated fixture is no matching function."""
    if _include_dir("rocblas/rocblas.h") is None:
        pytest.skip(f"rocBLAS headers not fetched ({FETCH_ROCM_HEADERS})")
    text = (EXPECTED / "cublas_complex_roc.hip").read_text()
    plain = re.sub(r"reinterpret_cast<[\w\s*]+>\(([^()]*)\)", r"\1", text)
    assert plain != text and "reinterpret_cast" not in plain
    src = tmp_path / "uncast.hip"
    src.write_text(plain)
    proc = hipcc(src, f"-I{ROCM_LIBRARY_INCLUDE}")
    assert proc.returncode != 0 and "no matching function for call to 'rocblas_cgemm'" in proc.stderr


INPUTS = {c.source: c.cuda_headers for c in CASES.values()}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_fixture_input_is_valid_cuda(name, nvcc):
    missing = [h for h in INPUTS[name] if not (CUDA_LIBRARY_INCLUDE / h).is_file()]
    if missing:
        pytest.skip(f"{name}: the CUDA toolkit here lacks {', '.join(missing)} and no fetched copy is in "
                    f"{CUDA_LIBRARY_INCLUDE} ({FETCH_CUDA_HEADERS})")
    proc = nvcc(SRC / name)
    assert proc.returncode == 0, proc.stderr
