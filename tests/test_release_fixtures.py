"""What ROCm 6.x and 7.x changed (docs/rocm-releases.md), proved by compiling: each
`fixtures/releases/NAME/input.cu` is valid CUDA (nvcc, where installed) built around one such change;
it is migrated for each release (`fix --target-rocm R`), the output is compared with
`output-rocm-R.cu`, and the output is compiled with that release's HIP compiler
(tests/harness/hip_toolchains.py; skipped with the reason where it is absent). An output that does
not compile is allowed only where a finding of `check --target-rocm R` on it stands at every line
the compiler reports: nothing fails silently.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected outputs after an intended change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import hip_toolchains
import pytest

from conftest import FIXTURES, run_cli

RELEASES_DIR = FIXTURES / "releases"
NAMES = sorted(p.name for p in RELEASES_DIR.iterdir() if (p / "input.cu").is_file())
UPDATE = os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1"
CUDA_LIBRARY_INCLUDE = FIXTURES.parent / ".cache" / "cuda-library-headers" / "include"
# (fixture, release) outputs that do not compile, and why: the test checks that findings say so
EXPECTED_FAILURES = {
    ("warp_mask_macro", "6.4"): "ROCm 6.x declares the _sync functions only with -DHIP_ENABLE_WARP_SYNC_BUILTINS (HIP403)",
    ("warp_mask_macro", "5.2"): "ROCm 5.2 has no _sync functions; the partial-mask call has no fix (HIP403)",
    ("wavefront_use", "7.2"): "clang 22 has no __AMDGCN_WAVEFRONT_SIZE (HIP409)",
    ("cublas_gemm_ex", "5.2"): "hipBLAS of ROCm 5.x has no hipDataType / hipComplex API (HIP102: needs ROCm 6.0)",
}
# 5.2 has no hipBLAS in Debian 12: the library headers fetched for it (hip_toolchains.library_includes)
_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):\d+: (?P<kind>error|warning|note): (?P<msg>.*)$",
                         re.MULTILINE)


def error_sites(stderr: str, name: str) -> list[set[int]]:
    """For each error, the lines of file `name` the compiler points at: the error's own, the
    template instantiation that led to it, the macro it was expanded from."""
    sites: list[set[int]] = []
    for m in _DIAGNOSTIC.finditer(stderr):
        if m["kind"] == "error":
            sites.append(set())
        elif m["kind"] == "warning" or not sites:
            continue
        if Path(m["file"]).name == name and (m["kind"] == "error" or m["msg"].startswith(
                ("in instantiation", "expanded from macro"))):
            sites[-1].add(int(m["line"]))
    return [s for s in sites if s]


def _migrate(path: Path, release: str) -> str:
    proc = run_cli("fix", "--isolated", "--no-cache", "--stdout", "--target-rocm", release, path)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", NAMES)
def test_input_is_valid_cuda(name, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc (CUDA) is not installed")
    args = [nvcc, "-c", "-arch=sm_80", str(RELEASES_DIR / name / "input.cu"), "-o", str(tmp_path / "x.o")]
    if CUDA_LIBRARY_INCLUDE.is_dir():
        args[1:1] = ["-I", str(CUDA_LIBRARY_INCLUDE)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode and "No such file" in proc.stderr:
        pytest.skip(f"a CUDA library header is missing: {proc.stderr.strip().splitlines()[0]}")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("release", hip_toolchains.RELEASES)
@pytest.mark.parametrize("name", NAMES)
def test_migration_matches_and_compiles(name, release, tmp_path):
    folder = RELEASES_DIR / name
    got = _migrate(folder / "input.cu", release)
    expected = folder / f"output-rocm-{release}.cu"
    if UPDATE:
        expected.write_text(got)
    assert got == expected.read_text(), f"{expected.name} differs from the migration output"
    command = hip_toolchains.command(release)
    if command is None:
        pytest.skip(f"HIP {release}: {hip_toolchains.why_missing(release)}")
    out = tmp_path / f"{name}.hip"
    out.write_text(got)
    includes = [f"-I{d}" for d in hip_toolchains.library_includes(release)]
    proc = subprocess.run([*command, "-std=c++17", *includes, str(out)], capture_output=True, text=True,
                          env=hip_toolchains.env(release))
    if proc.returncode == 0:
        return
    if "file not found" in proc.stderr and "hipblas" in proc.stderr:
        pytest.skip(f"HIP {release}: no hipBLAS headers ({proc.stderr.strip().splitlines()[0]})")
    assert (name, release) in EXPECTED_FAILURES, proc.stderr
    sites = error_sites(proc.stderr, out.name)
    assert sites, proc.stderr
    report = run_cli("check", "--isolated", "--no-cache", "--format", "json", "--target-rocm", release, out)
    found = {f["line"] for f in json.loads(report.stdout)["findings"]}
    silent = [sorted(lines) for lines in sites if not lines & found]
    assert not silent, f"errors without a finding at lines {silent}:\n{proc.stderr}"



HELPER_MATH = FIXTURES.parent / ".cache" / "real-world" / "sources" / "cuda-samples" / "usr" / "share" / "doc" / \
    "nvidia-cuda-toolkit" / "examples" / "Common" / "helper_math.h"


@pytest.mark.parametrize("release", hip_toolchains.RELEASES)
def test_cuda_samples_helper_math_compiles(release, tmp_path):
    """The CUDA samples' helper_math.h (hundreds of vector operators, several of which tie with HIP
    6.x/7.x's own) migrated for each release, used by arithmetic on every vector type it covers."""
    if not HELPER_MATH.is_file():
        pytest.skip("the CUDA samples are not fetched (python bench/real_world.py fetches them)")
    command = hip_toolchains.command(release)
    if command is None:
        pytest.skip(f"HIP {release}: {hip_toolchains.why_missing(release)}")
    shutil.copy(HELPER_MATH, tmp_path / "helper_math.h")
    shutil.copy(RELEASES_DIR / "_helper_math" / "use.cu", tmp_path / "use.cu")
    proc = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", release, tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    out = subprocess.run([*command, "-std=c++17", str(tmp_path / "use.cu")], capture_output=True, text=True,
                         env=hip_toolchains.env(release))
    assert out.returncode == 0, out.stderr
