"""Python fixtures (fixtures/python/<name>/): CUDA embedded in Python and Python that drives
CUDA. Each has `input.py`, the golden findings of `check` (`expected-findings.txt`, concise
format) and the golden output of `fix --unsafe-fixes` (`expected.py`). The output must parse
(libcst round trip), be stable under a second `fix`, and its embedded kernels must compile at
every ROCm release (7.2, 6.4, 5.2; the golden outputs are the same for each target)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import libcst
import pytest

from conftest import AT_EVERY_RELEASE, FIXTURES, ROOT, run_cli

pytestmark = pytest.mark.rules

PY_FIXTURES = FIXTURES / "python"
NAMES = sorted(p.name for p in PY_FIXTURES.iterdir() if (p / "input.py").is_file())
HIP_INCLUDE = Path("/usr/include/hip")


def _copy(name: str, tmp_path: Path) -> Path:
    work = tmp_path / "input.py"
    shutil.copy(PY_FIXTURES / name / "input.py", work)
    return work


def test_all_three_fixtures_present():
    assert {"cupy_warp_reduce", "torch_load_inline", "torch_setup"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_findings_at_the_right_python_lines(name, tmp_path):
    _copy(name, tmp_path)
    r = run_cli("check", "--format", "concise", "--show-info", "input.py", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    expected = (PY_FIXTURES / name / "expected-findings.txt").read_text()
    assert r.stdout == expected


@pytest.mark.parametrize("name", NAMES)
def test_fix_gives_expected_valid_python(name, tmp_path):
    work = _copy(name, tmp_path)
    r = run_cli("fix", "--unsafe-fixes", "input.py", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    out = work.read_text()
    assert out == (PY_FIXTURES / name / "expected.py").read_text()
    # valid Python: libcst parses it and prints it back byte for byte
    assert libcst.parse_module(out).code == out
    ast.parse(out)
    # a second run changes nothing
    again = run_cli("fix", "--unsafe-fixes", "--diff", "input.py", cwd=tmp_path)
    assert again.stdout == "", again.stdout


def _module_string(source: str, name: str) -> str:
    """Value of the module-level string constant `name` (the kernel text as CuPy/torch get it)."""
    import textwrap

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return textwrap.dedent(ast.literal_eval(node.value))
    raise AssertionError(f"{name} not found")


def _call_string(source: str, var: str) -> str:
    """First argument (a literal) of the call assigned to `var`."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == var:
            return ast.literal_eval(node.value.args[0])
    raise AssertionError(f"{var} not found")


# CuPy compiles RawKernel code with NVRTC (CUDA) / hiprtc (ROCm), which provide the runtime
# declarations themselves; a standalone compile needs the runtime header, so the tests put
# `#include <cuda_runtime.h>` (nvcc) or `#include <hip/hip_runtime.h>` (hipcc) in front.
CUPY_KERNELS = [("module", "WARP_SUM_SRC"), ("call", "scale"), ("call", "scale_one")]


def _cupy_kernel(source: str, how: str, name: str) -> str:
    return _module_string(source, name) if how == "module" else _call_string(source, name)


@pytest.mark.parametrize("how,name", CUPY_KERNELS)
def test_cupy_input_kernels_are_valid_cuda(how, name, tmp_path, nvcc):
    src = (PY_FIXTURES / "cupy_warp_reduce" / "input.py").read_text()
    cu = tmp_path / f"{name}.cu"
    cu.write_text("#include <cuda_runtime.h>\n" + _cupy_kernel(src, how, name))
    r = nvcc(cu)
    assert r.returncode == 0, r.stderr


def _hip_has_warp_sync() -> bool:
    amd = HIP_INCLUDE / "amd_detail"
    return any("__shfl_down_sync" in p.read_text(errors="replace") for p in amd.rglob("*.h"))


HARNESS = ROOT / "tests" / "harness" / "warp_sync_rocm62.h"


# `scale` is an implicit concatenation: reported, not rewritten (see expected-findings.txt).
@AT_EVERY_RELEASE
@pytest.mark.parametrize("how,name", [k for k in CUPY_KERNELS if k[1] != "scale"])
def test_migrated_cupy_kernels_compile_with_hipcc(how, name, tmp_path, hipcc):
    src = (PY_FIXTURES / "cupy_warp_reduce" / "expected.py").read_text()
    kernel = _cupy_kernel(src, how, name)
    assert "cuda" not in kernel
    hip = tmp_path / f"{name}.hip"
    hip.write_text("#include <hip/hip_runtime.h>\n" + kernel)
    # The migrated kernel uses the `_sync` warp functions with 64-bit masks (HIP402's fix), which
    # HIP 7.x declares with a static_assert on the mask's size. HIP 6.4 declares them only with
    # -DHIP_ENABLE_WARP_SYNC_BUILTINS (what HIP403 reports at --target-rocm 6.4). HIP 5.2 has no
    # `_sync` functions; the harness declares them with clr's 64-bit mask check (see the harness),
    # so each proves the masks were migrated.
    extra = {"6.4": ("-DHIP_ENABLE_WARP_SYNC_BUILTINS",),
             "5.2": () if _hip_has_warp_sync() else ("-include", str(HARNESS))}.get(hipcc.release, ())
    r = hipcc(hip, *extra)
    assert r.returncode == 0, r.stderr


def test_cupy_kernels_migrated_for_rocm_5_2_compile_as_is(tmp_path, hipcc):
    """With --target-rocm 5.2 the `_sync` calls become HIP 5.2's maskless builtins (HIP403's
    unsafe fix): the kernels then compile with the real HIP 5.2 headers alone. (5.2 only: at 6.4
    and 7.2 the output keeps the `_sync` calls, compiled above.)"""
    work = tmp_path / "input.py"
    work.write_text((PY_FIXTURES / "cupy_warp_reduce" / "input.py").read_text())
    r = run_cli("fix", "--unsafe-fixes", "--target-rocm", "5.2", work, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    out = work.read_text()
    for how, name in [k for k in CUPY_KERNELS if k[1] != "scale"]:
        hip = tmp_path / f"{name}-5.2.hip"
        hip.write_text("#include <hip/hip_runtime.h>\n" + _cupy_kernel(out, how, name))
        compiled = hipcc(hip)
        assert compiled.returncode == 0, compiled.stderr


@AT_EVERY_RELEASE
def test_load_inline_kernel_is_valid_cuda_and_compiles_migrated(tmp_path, nvcc, hipcc):
    folder = PY_FIXTURES / "torch_load_inline"
    original = _module_string((folder / "input.py").read_text(), "KERNEL_SOURCE")
    cu = tmp_path / "kernel.cu"
    cu.write_text(original)
    r = nvcc(cu)
    assert r.returncode == 0, r.stderr
    migrated = _module_string((folder / "expected.py").read_text(), "KERNEL_SOURCE")
    assert "#include <hip/hip_runtime.h>" in migrated and "cuda" not in migrated
    hip = tmp_path / "kernel.hip"
    hip.write_text(migrated)
    r = hipcc(hip)
    assert r.returncode == 0, r.stderr


@AT_EVERY_RELEASE
def test_setup_flags_after_fix_are_accepted_by_hipcc(tmp_path, hipcc):
    """The nvcc list that `fix` leaves (minus what is still reported) is a valid hipcc command."""
    import re

    out = (PY_FIXTURES / "torch_setup" / "expected.py").read_text()
    tree = ast.parse(out)
    flags = next(ast.literal_eval(n.value) for n in tree.body
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "nvcc_flags")
    still_reported = re.findall(r"`([^`]*)` in the nvcc flags", run_cli(
        "check", "--format", "concise", PY_FIXTURES / "torch_setup" / "expected.py").stdout)
    usable = [f for f in flags if f not in still_reported]
    assert "-fgpu-default-stream=per-thread" in usable
    kernel = tmp_path / "k.hip"
    kernel.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n")
    r = hipcc(kernel, *usable)
    assert r.returncode == 0, r.stderr


@AT_EVERY_RELEASE
def test_hipcc_rejects_the_reported_nvcc_flags(tmp_path, hipcc):
    """The facts HIP620 states about hipcc, checked against the real hipcc."""
    kernel = tmp_path / "k.hip"
    kernel.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n")
    for flags in (["-gencode", "arch=compute_80,code=sm_80"], ["--default-stream", "per-thread"],
                  ["--expt-relaxed-constexpr"], ["--maxrregcount=64"], ["--use_fast_math"]):
        assert hipcc(kernel, *flags).returncode != 0, flags
    assert hipcc(kernel, "-fgpu-default-stream=per-thread").returncode == 0


def test_embedded_findings_are_at_file_positions():
    """Spot-check: the HIP101 in the escaped one-line literal points at the name in the file."""
    src = (PY_FIXTURES / "cupy_warp_reduce" / "input.py").read_text().splitlines()
    findings = (PY_FIXTURES / "cupy_warp_reduce" / "expected-findings.txt").read_text().splitlines()
    for line in findings:
        _, lno, col, rest = line.split(":", 3)
        code = rest.split()[0]
        if code != "HIP101":
            continue
        name = rest.split("`")[1]
        text = src[int(lno) - 1]
        assert text[int(col) - 1:].startswith(name), line


def test_check_reports_nothing_for_unrelated_python(tmp_path):
    (tmp_path / "plain.py").write_text("import json\nprint(json.dumps({'cuda': 1}))\n")
    r = run_cli("check", "--format", "concise", "plain.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "HIP" not in r.stdout


def test_pre_commit_style_single_file_run_does_not_import_libcst(tmp_path):
    """A run over C++ files only never loads libcst."""
    (tmp_path / "a.cu").write_text("#include <cuda_runtime.h>\n")
    code = ("import sys\nfrom cuda2hip.cli.commands import main\n"
            "try:\n    main(['check', 'a.cu'])\nexcept SystemExit:\n    pass\n"
            "print('LIBCST', 'libcst' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert "LIBCST False" in r.stdout, r.stdout + r.stderr


def test_directory_run_covers_cuda_and_python_files(tmp_path):
    (tmp_path / "a.cu").write_text("#include <cuda_runtime.h>\n")
    (tmp_path / "k.py").write_text("import cupy as cp\nk = cp.RawKernel('cudaFree(p);', 'k')\n")
    r = run_cli("check", "--format", "concise", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert "a.cu:1:10: HIP100" in r.stdout and "k.py:2:19: HIP101" in r.stdout, r.stdout
    r = run_cli("fix", ".", cwd=tmp_path)
    assert (tmp_path / "k.py").read_text() == "import cupy as cp\nk = cp.RawKernel('hipFree(p);', 'k')\n"
