"""Issue 13: the legacy cuBLAS API (cublas.h) is never renamed into the v2 hipBLAS API; each
legacy call is reported (HIP123). The v2 API (cublas_v2.h) keeps being renamed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, ROOT, run_cli

LEGACY = """#include <cublas.h>
#include <cuda_runtime.h>
int main() {
  float* x;
  cublasInit();
  cudaMalloc(&x, 4 * sizeof(float));
  cublasSetVector(4, sizeof(float), x, 1, x, 1);
  cublasSscal(4, 2.0f, x, 1);
  float n = cublasSnrm2(4, x, 1);
  cublasStatus_t s = cublasGetError();
  cudaFree(x);
  cublasShutdown();
  return s != CUBLAS_STATUS_SUCCESS || n < 0;
}
"""
V2 = """#include <cublas_v2.h>
void scale(cublasHandle_t h, int n, float a, float* x) { cublasSscal(h, n, &a, x, 1); }
"""
LEGACY_CALLS = ["cublasInit", "cublasSscal", "cublasSnrm2", "cublasGetError", "cublasShutdown"]


def _project(tmp_path, files: dict[str, str]):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "cuda2hip.toml").write_text("")
    for name, text in files.items():
        (proj / name).write_text(text)
    return proj


def _fix(proj, *names):
    proc = run_cli("fix", "--no-cache", "--format", "json", *names, cwd=proj)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


@pytest.fixture
def cublas_headers():
    if not (CUDA_LIBRARY_INCLUDE / "cublas.h").is_file():
        pytest.skip(f"no cuBLAS headers here; fetch them: {FETCH_CUDA_HEADERS}")


def test_the_input_is_legacy_cublas(tmp_path, nvcc, cublas_headers):
    src = tmp_path / "legacy.cu"
    src.write_text(LEGACY)
    proc = nvcc(src)
    assert proc.returncode == 0, proc.stderr
    # ... and the v2 call shape does not compile against it: the signatures differ
    src.write_text(LEGACY.replace("cublasSscal(4, 2.0f, x, 1)", "cublasSscal(0, 4, &n, x, 1)"))
    assert nvcc(src).returncode != 0


def test_legacy_calls_are_reported_never_renamed(tmp_path):
    proj = _project(tmp_path, {"legacy.cu": LEGACY})
    remaining = [f for f in _fix(proj, "legacy.cu") if not f["fixed"]]
    out = (proj / "legacy.cu").read_text()
    for name in LEGACY_CALLS:
        assert f"{name}(" in out, name
    assert "hipblasSscal" not in out and "hipblasSnrm2" not in out
    # kept while legacy calls remain, after the runtime HIP121 puts first (hipMalloc needs it)
    assert out.startswith("#include <hip/hip_runtime.h>\n#include <cublas.h>\n")
    legacy = [f for f in remaining if f["code"] == "HIP123"]
    assert sorted(f["message"].split("`")[1] for f in legacy) == sorted(["cublas.h", *LEGACY_CALLS])
    assert all(f["effort"] == "medium" and "v2 API" in f["message"] for f in legacy)
    assert not [f for f in remaining if f["code"] == "HIP102" and "cublas" in f["message"]]
    # what means the same in both APIs is migrated
    assert "hipMalloc(&x" in out and "hipblasSetVector(4" in out and "hipblasStatus_t s" in out
    # and a second run changes nothing
    assert not [f for f in _fix(proj, "legacy.cu") if f["fixed"]]


def test_legacy_api_through_a_local_header(tmp_path):
    proj = _project(tmp_path, {"blas.h": "#pragma once\n#include <cublas.h>\n",
                               "main.cu": '#include "blas.h"\nvoid f(float* x) { cublasSscal(4, 2.0f, x, 1); }\n'})
    found = _fix(proj, "main.cu")
    assert "cublasSscal(4, 2.0f, x, 1)" in (proj / "main.cu").read_text()
    assert [f["line"] for f in found if f["code"] == "HIP123"] == [2]


def test_v2_calls_keep_being_renamed(tmp_path):
    proj = _project(tmp_path, {"v2.cu": V2})
    found = _fix(proj, "v2.cu")
    out = (proj / "v2.cu").read_text()
    assert "hipblasSscal(h, n, &a, x, 1)" in out and "#include <hipblas/hipblas.h>" in out
    assert not [f for f in found if f["code"] == "HIP123"]


def test_cublas_h_without_legacy_calls_is_migrated(tmp_path):
    proj = _project(tmp_path, {"types.cu": "#include <cublas.h>\ncublasStatus_t last = CUBLAS_STATUS_SUCCESS;\n"})
    assert not [f for f in _fix(proj, "types.cu") if f["code"] == "HIP123"]
    assert (proj / "types.cu").read_text() == "#include <hipblas/hipblas.h>\nhipblasStatus_t last = HIPBLAS_STATUS_SUCCESS;\n"


def test_legacy_function_list_is_what_cublas_h_declares(cublas_headers):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_legacy_api_data.py"), str(CUDA_LIBRARY_INCLUDE),
                           "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = json.loads((ROOT / "rules" / "api" / "legacy" / "cublas.json").read_text())["functions"]
    assert {"cublasInit", "cublasAlloc", "cublasSscal", "cublasSgemm"} <= set(names)
    assert "cublasSetVector" not in names  # shared by both APIs (cublas_api.h)


def test_legacy_calls_stay_in_the_roc_profile(tmp_path):
    proj = _project(tmp_path, {"legacy.cu": LEGACY})
    proc = run_cli("fix", "--no-cache", "--roc", "--unsafe-fixes", "legacy.cu", cwd=proj)
    assert proc.returncode == 1, proc.stderr
    out = (proj / "legacy.cu").read_text()
    assert "cublasSscal(4, 2.0f, x, 1)" in out and "rocblas_sscal" not in out and "rocblas_initialize" not in out
