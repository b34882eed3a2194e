"""HIP142's fix is safe in translation units and unsafe in headers, which hipRTC may compile too
(CuPy's and PyCUDA's run-time kernels include them), where clang's HIP wrappers declare no `std::`
math functions; CUDA embedded in Python strings (compiled by hipRTC, device code only) is not
reported at all."""

from __future__ import annotations

import json

from conftest import run_cli

CODE = "#include <cmath>\n__host__ __device__ inline bool ok(double v) { return !isnan(v); }\n"


def _fix(path, *extra):
    proc = run_cli("fix", "--isolated", "--no-cache", "--select", "HIP142", "--target-rocm", "7.2", *extra, path)
    assert proc.returncode in (0, 1), proc.stderr
    return path.read_text()


def test_safe_in_a_translation_unit(tmp_path):
    path = tmp_path / "math.cu"
    path.write_text(CODE)
    assert "!std::isnan(v)" in _fix(path)


def test_unsafe_in_a_header(tmp_path):
    path = tmp_path / "math.cuh"
    path.write_text(CODE)
    assert _fix(path) == CODE
    assert "!std::isnan(v)" in _fix(path, "--unsafe-fixes")


def test_quiet_in_cuda_embedded_in_python(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text('import cupy\nk = cupy.RawKernel(r"""\n' + CODE.replace("#include <cmath>\n", "")
                    + 'extern "C" __global__ void k(double* x) { x[0] = ok(x[0]) + __shfl(x[0], 0); }\n""", "k")\n')
    # the string is linted (HIP406 on the maskless shuffle), HIP142 stays quiet
    proc = run_cli("check", "--isolated", "--no-cache", "--format", "json", "--target-rocm", "7.2", path)
    codes = {f["code"] for f in json.loads(proc.stdout)["findings"]}
    assert "HIP406" in codes and "HIP142" not in codes, proc.stdout
