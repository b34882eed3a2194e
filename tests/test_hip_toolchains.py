"""tests/harness/hip_toolchains.py: the syntax-check compiler of each ROCm release (7.2 and 6.4 as
tests/harness/fetch_hip_toolchain.py prepares them, 5.2 the system's hipcc) compiles with that
release's headers and no other, and says why when it is absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import conftest  # noqa: F401  (puts tests/harness on the path)
import hip_toolchains

VALID = """\
#include <hip/hip_runtime.h>
static_assert(HIP_VERSION_MAJOR == {major} && HIP_VERSION_MINOR == {minor}, "another release's headers");
__global__ void scale(float* x, float a, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}}
int main() {{
  float* x = nullptr;
  if (hipMalloc(&x, 256 * sizeof(float)) != hipSuccess) return 1;
  scale<<<1, 256>>>(x, 2.0f, 256);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}}
"""


def _toolchain(release: str) -> hip_toolchains.Toolchain:
    found = hip_toolchains.get(release)
    if found is None:
        pytest.skip(f"HIP {release}: {hip_toolchains.why_missing(release)}")
    return found


@pytest.mark.parametrize("release", hip_toolchains.RELEASES)
def test_compiles_with_its_own_release_headers_only(release, tmp_path):
    toolchain = _toolchain(release)
    major, minor = release.split(".")
    good = tmp_path / "good.hip"
    good.write_text(VALID.format(major=major, minor=minor))
    proc = subprocess.run([*toolchain.command, "-std=c++17", str(good)], capture_output=True, text=True,
                          env=toolchain.env)
    assert proc.returncode == 0, proc.stderr
    assert toolchain.hip_version.startswith(release + ".") and toolchain.rocm_version.startswith(release + ".")
    assert toolchain.describe() == f"HIP {toolchain.rocm_version} / clang {toolchain.clang_version}"


@pytest.mark.parametrize("release", hip_toolchains.RELEASES)
def test_an_undeclared_function_fails(release, tmp_path):
    toolchain = _toolchain(release)
    bad = tmp_path / "bad.hip"
    bad.write_text("#include <hip/hip_runtime.h>\nint main() { hipFooBar(); return 0; }\n")
    proc = subprocess.run([*toolchain.command, str(bad)], capture_output=True, text=True, env=toolchain.env)
    assert proc.returncode != 0 and "hipFooBar" in proc.stderr


@pytest.mark.parametrize("release", hip_toolchains.MODERN)
def test_the_library_headers_are_the_releases_own(release, tmp_path):
    """hipBLAS, rocPRIM and rocThrust come from the release's tree, not from Debian 12's or the
    fetched 5.x library headers (no -I needed)."""
    toolchain = _toolchain(release)
    assert hip_toolchains.library_includes(release) == []
    src = tmp_path / "lib.hip"
    src.write_text("#include <hip/hip_runtime.h>\n#include <cstring>\n#include <hipblas/hipblas.h>\n"
                   "#include <thrust/device_vector.h>\n#include <hipcub/hipcub.hpp>\nint main() { return 0; }\n")
    proc = subprocess.run([*toolchain.command, "-std=c++17", "--cuda-host-only", "-H", str(src)],
                          capture_output=True, text=True, env=toolchain.env)
    assert proc.returncode == 0, proc.stderr
    rocm = toolchain.hipcc[-1].removeprefix("--rocm-path=")
    headers = {line.lstrip(". ") for line in proc.stderr.splitlines() if line.startswith(".")}
    rocm_headers = {h for h in headers if any(f"/include/{d}/" in h for d in ("hip", "hipblas", "thrust", "hipcub"))}
    assert len(rocm_headers) > 20 and all(os.path.realpath(h).startswith(os.path.realpath(rocm)) for h in rocm_headers)


@pytest.mark.parametrize("release", hip_toolchains.MODERN)
def test_the_manifest_names_every_package(release):
    toolchain = _toolchain(release)
    manifest = json.loads((hip_toolchains.tree(release) / "manifest.json").read_text())
    assert manifest["packages"]["libamdhip64-dev"].split(":")[-1].startswith(toolchain.rocm_version)
    assert f"clang-{toolchain.clang_version.split('.')[0]}" in manifest["packages"]
    assert manifest["release"] == release


def test_52_is_the_system_hipcc_for_amd():
    """The command the tests and the harness used before there were three releases."""
    toolchain = _toolchain("5.2")
    assert hip_toolchains.command("5.2") == [shutil.which("hipcc"), "-x", "hip", "--offload-arch=gfx90a",
                                             "-fsyntax-only"]
    assert hip_toolchains.env("5.2")["HIP_PLATFORM"] == "amd"
    assert toolchain.library_includes == (str(hip_toolchains.ROCM_LIBRARY_INCLUDE),)
    assert hip_toolchains.library_includes("5.2") == ([str(hip_toolchains.ROCM_LIBRARY_INCLUDE)]
                                                      if hip_toolchains.ROCM_LIBRARY_INCLUDE.is_dir() else [])


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA2HIP_HIP_TOOLCHAINS", str(tmp_path / "tc"))
    assert hip_toolchains.root() == tmp_path / "tc"
    monkeypatch.delenv("CUDA2HIP_HIP_TOOLCHAINS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hip_toolchains.root() == tmp_path / "xdg" / "cuda2hip" / "hip-toolchains"


def test_an_absent_or_half_fetched_release_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA2HIP_HIP_TOOLCHAINS", str(tmp_path))
    assert hip_toolchains.get("7.2") is None and hip_toolchains.command("7.2") is None
    assert "fetch_hip_toolchain.py --release 7.2" in hip_toolchains.why_missing("7.2")
    # a tree whose fetch did not finish: no link to it, and no manifest in it
    (tmp_path / "rocm-6.4-0123456789ab" / "toolchain").mkdir(parents=True)
    (tmp_path / "rocm-6.4.failed").write_text("2026-12-04 10:00: apt-get update of sid failed\n")
    assert hip_toolchains.get("6.4") is None
    assert "the last fetch failed: 2026-12-04 10:00: apt-get update of sid failed" in hip_toolchains.why_missing("6.4")
    with pytest.raises(ValueError, match="7.2, 6.4, 5.2"):
        hip_toolchains.get("9.9")


def test_the_sysroot_hides_rocm_headers_only(tmp_path):
    link = hip_toolchains.sysroot(tmp_path)
    include = link / "usr" / "include"
    shown = set(os.listdir(include))
    system = set(os.listdir("/usr/include"))
    assert shown == {n for n in system if not hip_toolchains.ROCM_INCLUDE_NAMES.match(n)}
    assert not {"hip", "hsa", "rocprim", "thrust", "hipblas"} & shown
    assert os.readlink(link / "usr" / "lib" / "gcc") == "/usr/lib/gcc"  # the host's libstdc++
    before = os.readlink(link)
    assert hip_toolchains.sysroot(tmp_path) == link and os.readlink(link) == before  # current: kept
