"""The nvcc flag table (rules/build/data/nvcc-flags.yaml) against the real HIP toolchain: every
clang flag it writes is accepted by hipcc for an AMD target, the nvcc spellings it removes are
rejected by clang, and the behaviours its notes state hold (constexpr functions and lambdas in
device code without nvcc's flags)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from conftest import ROOT, not_installed

pytestmark = pytest.mark.integration

TABLE = ROOT / "rules" / "build" / "data" / "nvcc-flags.yaml"
KERNEL = """#include <hip/hip_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }
"""


def _entries():
    return yaml.safe_load(TABLE.read_text())


def _written_flags() -> list[str]:
    out = set()
    for e in _entries():
        for text in [e.get("replace")] + list((e.get("values") or {}).values()):
            if text:
                out.add(text)
    return sorted(out)


@pytest.fixture
def hip_compile(tmp_path):
    exe = shutil.which("hipcc")
    if exe is None:
        pytest.skip(not_installed("hipcc", "hipcc"))

    def compile_(source: str, *flags: str) -> subprocess.CompletedProcess:
        src = tmp_path / "t.hip"
        src.write_text(source)
        # cwd: -save-temps writes its intermediate files into the working directory
        return subprocess.run([exe, "--offload-arch=gfx90a", *flags, "-c", str(src), "-o", str(tmp_path / "t.o")],
                              capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"),
                              cwd=tmp_path)

    return compile_


@pytest.mark.parametrize("flags", _written_flags())
def test_hipcc_accepts_every_flag_the_table_writes(hip_compile, flags):
    res = hip_compile(KERNEL, *flags.split())
    assert res.returncode == 0, res.stderr
    assert "unused" not in res.stderr and "unknown" not in res.stderr, res.stderr


# (-lineinfo is not in this list: clang reads it as the linker input -l ineinfo, which fails only
# at link time.)
@pytest.mark.parametrize("flag", ["--expt-relaxed-constexpr", "--extended-lambda", "--use_fast_math"])
def test_clang_rejects_the_nvcc_spelling(hip_compile, flag):
    res = hip_compile(KERNEL, flag)
    assert res.returncode != 0 and ("unsupported option" in res.stderr or "unknown argument" in res.stderr)


def test_constexpr_host_functions_are_callable_from_device_code_by_default(hip_compile):
    src = KERNEL + "constexpr int sq(int v) { return v * v; }\n__global__ void c(int* o) { o[0] = sq(3); }\n"
    assert hip_compile(src).returncode == 0
    # ... and it is clang's default, not an accident: turning it off breaks the call.
    assert hip_compile(src, "-Xclang", "-fno-cuda-host-device-constexpr").returncode != 0


def test_device_lambdas_need_no_flag(hip_compile):
    src = KERNEL + """template <class F> __global__ void apply(F f, int* o) { o[threadIdx.x] = f(threadIdx.x); }
void run(int* o) {
  auto f = [] __device__ (int x) { return 2 * x; };
  auto g = [] __host__ __device__ (int x) { return 3 * x; };
  apply<<<1, 32>>>(f, o);
  apply<<<1, 32>>>(g, o);
}
"""
    res = hip_compile(src)
    assert res.returncode == 0, res.stderr


def test_every_entry_has_a_note_or_a_replacement():
    for e in _entries():
        assert e["names"] and (e.get("note") or e.get("replace") is not None or e.get("values")), e
