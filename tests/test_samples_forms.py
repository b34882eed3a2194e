"""Constructs of NVIDIA's CUDA samples that nvcc accepts and HIP 6.4 / 7.2 reject unless migrated
(HIP100's GL interop header, HIP144-HIP147, HIP149): valid CUDA (nvcc), migrated with plain `fix
--target-rocm R` they compile with release R's hipcc, except the surface write given the trap
mode, whose fix is unsafe: it stays, with HIP147 at its line."""

from __future__ import annotations

import pytest

from conftest import run_cli
from hip_toolchains import MODERN

SAFE = """\
#include <cuda_runtime.h>
#include <cuda_gl_interop.h>
#include <vector_functions.h>
#include <thrust/device_ptr.h>
#include <thrust/sort.h>

struct cudaGraphicsResource *cuda_pbo_resource;

void register_buffer(GLuint pbo) {
  cudaGraphicsGLRegisterBuffer(&cuda_pbo_resource, pbo, cudaGraphicsMapFlagsWriteDiscard);
  cudaGraphicsMapResources(1, &cuda_pbo_resource, 0);
}

float sum(const float* v, int n) {
  register float s = 0.0f;
  for (register int i = 0; i < n; i++) s += v[i];
  return s;
}

void keys(unsigned int* d, int n) {
  thrust::device_ptr<unsigned int> p(d);
  thrust::sequence(p, p + n);
  thrust::sort(p, p + n);
}

__global__ void write_zero(cudaSurfaceObject_t out, int w) {
  float4 v = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  surf2Dwrite(v, out, (threadIdx.x % w) * 16, 0, cudaBoundaryModeZero);
}
"""

TRAP = """\
#include <cuda_runtime.h>

__global__ void write_trap(cudaSurfaceObject_t out) {
  surf2Dwrite(1.0f, out, threadIdx.x * 4, 0, cudaBoundaryModeTrap);
}
"""


def _migrate(tmp_path, source: str, release: str):
    src = tmp_path / "in"
    src.mkdir()
    (src / "k.cu").write_text(source)
    out = tmp_path / "out"
    proc = run_cli("fix", "--target-rocm", release, "--output-dir", out, src)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return out / "k.cu"


def test_inputs_are_valid_cuda(tmp_path, nvcc):
    for name, source in (("safe.cu", SAFE), ("trap.cu", TRAP)):
        path = tmp_path / name
        path.write_text(source)
        proc = nvcc(path)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("hipcc", MODERN, indirect=True)
def test_safe_fixes_compile_at_the_release(tmp_path, hipcc):
    migrated = _migrate(tmp_path, SAFE, hipcc.release)
    text = migrated.read_text()
    assert "hip/hip_gl_interop.h" in text and "hipGraphicsResource *cuda_pbo_resource" in text
    assert "hipGraphicsRegisterFlagsWriteDiscard" in text and "register " not in text
    assert "BoundaryMode" not in text and "#include <thrust/sequence.h>" in text
    proc = hipcc(migrated)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("hipcc", MODERN, indirect=True)
def test_trap_mode_is_reported_not_fixed(tmp_path, hipcc):
    migrated = _migrate(tmp_path, TRAP, hipcc.release)
    assert "hipBoundaryModeTrap" in migrated.read_text()
    proc = hipcc(migrated)
    assert proc.returncode != 0 and ":4:" in proc.stderr
    check = run_cli("check", "--target-rocm", hipcc.release, "--select", "HIP147", migrated)
    assert "HIP147" in check.stdout and ":4:" in check.stdout, check.stdout
    unsafe = tmp_path / "unsafe"
    run_cli("fix", "--unsafe-fixes", "--target-rocm", hipcc.release, "--output-dir", unsafe, tmp_path / "in")
    assert "BoundaryMode" not in (unsafe / "k.cu").read_text()
    assert hipcc(unsafe / "k.cu").returncode == 0
