"""The collision data (rules/api/collisions/) against the real headers, and what it says."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, FETCH_ROCM_HEADERS, ROCM_LIBRARY_INCLUDE, ROOT

pytestmark = pytest.mark.integration

DATA = ROOT / "rules" / "api" / "collisions"


def _data(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_types_that_meet_in_hip_are_found_from_the_tables_and_headers():
    hip = _data("hip.json")
    # two CUDA enums, one HIP enum
    assert {"CUresult", "cudaError_t"} <= set(hip["classes"]["hipError_t"])
    assert hip["cuda"]["CUresult"] != hip["cuda"]["cudaError_t"]
    # handles and driver pointers are all `void *` in HIP, and so is `void *` itself
    assert {"CUdeviceptr", "cublasHandle_t", "cusparseHandle_t"} <= set(hip["classes"]["void *"])
    assert hip["hip"]["hipDeviceptr_t"] == "void *"
    # one type in CUDA already (CUstream_st *): overloading on them was never valid CUDA
    assert not any("CUstream" in names and "cudaStream_t" in names for names in hip["classes"].values())
    # the roc profile has its own targets: rocBLAS's handle is no `void *`
    roc = _data("roc.json")
    assert "cublasHandle_t" not in roc["classes"].get("void *", {})


def test_hip_definitions_name_the_members_that_tie():
    data = _data("hip-definitions.json")
    members = {(m["name"], tuple(m["params"])) for m in data["vector_members"]}
    assert ("operator+=", ("const V &",)) in members and ("operator++", ()) in members
    # templates (the binary operators, `operator+=(U)`) are not listed: they never tie
    assert not any(name in ("operator+", "operator*") for name, _ in members)
    assert data["vector_types"]["float3"] == ["float", 3]
    hosts = [e for e in data["functions"]["min"] if e["spaces"] == ["host"]]
    assert hosts and hosts[0]["params"] == ["int", "int"]


def _run(tool: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / tool), "--check"], capture_output=True, text=True)


def test_collision_data_matches_the_headers():
    if not (shutil.which("hipcc") and shutil.which("clang++-15") and shutil.which("c++filt")):
        pytest.skip("hipcc, clang++-15 and c++filt are needed (apt-get install hipcc clang-15 binutils)")
    if not (CUDA_LIBRARY_INCLUDE / "cublas_v2.h").is_file() or not (ROCM_LIBRARY_INCLUDE / "hipblas").is_dir():
        pytest.skip(f"library headers not fetched ({FETCH_CUDA_HEADERS}; {FETCH_ROCM_HEADERS})")
    proc = _run("generate_collision_data.py")
    assert proc.returncode == 0, proc.stderr


def test_hip_definitions_data_matches_the_headers():
    if not shutil.which("hipcc"):
        pytest.skip("hipcc not installed (apt-get install hipcc libamdhip64-dev)")
    proc = _run("generate_hip_definitions_data.py")
    assert proc.returncode == 0, proc.stderr
