"""End to end: a CMake project and a Makefile project (a kernel and a cuRAND call each) are
migrated with `cuda2hip fix`, then built with Debian's HIP toolchain for an AMD target (gfx90a).

Linking works without a GPU (libamdhip64 and libhiprand are plain shared libraries); running
the programs would need one, so the tests stop at the linked executables.

`--output-dir` (issue 6) is not on this branch: the projects are copied to a temporary directory
and migrated in place there.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, FIXTURES, not_installed, run_cli

pytestmark = pytest.mark.integration

BUILD = FIXTURES / "build"
CONFIG = BUILD / "cuda2hip.toml"  # adds the fixtures' cuRAND user rules (fixtures/build/rules)
ARCH = "gfx90a"
HIP_ENV = dict(os.environ, HIP_PLATFORM="amd")


def _migrate(project: str, tmp_path: Path, *extra: str) -> tuple[Path, subprocess.CompletedProcess]:
    """Migrate the fixture project as the issue asks: `cuda2hip fix --output-dir OUT SRC` (the
    fixture itself stays untouched)."""
    work = tmp_path / project
    src = BUILD / project / "input"
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    res = run_cli("fix", "--config", CONFIG, "--unsafe-fixes", "--offload-arch", ARCH, *extra,
                  "--output-dir", work, src)
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before
    return work, res


def _check_migration(project: str, build_file: str, tmp_path: Path) -> Path:
    work, res = _migrate(project, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    expected = (BUILD / project / "expected" / build_file).read_text()
    assert (work / build_file).read_text() == expected
    again = run_cli("fix", "--config", CONFIG, "--unsafe-fixes", "--offload-arch", ARCH, "--diff", work)
    assert again.returncode == 0 and not again.stdout, again.stdout + again.stderr
    return work


def _found(pattern: str) -> bool:
    return any(Path(p).is_file() for p in glob.glob(pattern))


# What the migrated projects build with beyond hipcc: hipRAND (its headers include rocRAND's, and
# Debian's libhiprand-dev does not depend on librocrand-dev), and for CMake hipRAND's package.
HIPRAND = {"/usr/include/hiprand/hiprand.h": "libhiprand-dev", "/usr/include/rocrand/rocrand.h": "librocrand-dev",
           "/usr/lib/*/libhiprand.so": "libhiprand-dev"}
HIPRAND_CMAKE = {"/usr/lib/*/cmake/hiprand/hiprand-config.cmake": "libhiprand-dev",
                 "/usr/lib/*/cmake/rocrand/rocrand-config.cmake": "librocrand-dev"}


def _hip_toolchain(*needs: dict[str, str]) -> tuple[str, str]:
    """(clang++, ROCm device-library directory) of the installed HIP toolchain; skips unless hipcc
    and every file of `needs` (pattern -> the Debian package holding it) are installed."""
    if shutil.which("hipcc") is None:
        pytest.skip(not_installed("hipcc", "hipcc"))
    missing = sorted({pkg for need in needs for pattern, pkg in need.items() if not _found(pattern)})
    if missing:
        pytest.skip(not_installed(", ".join(missing), " ".join(missing)))
    clang = shutil.which("clang++") or next(iter(sorted(glob.glob("/usr/lib/llvm-*/bin/clang++"), reverse=True)), None)
    bitcode = next(iter(glob.glob("/usr/lib/*/amdgcn/bitcode") + glob.glob("/opt/rocm/amdgcn/bitcode")), None)
    if clang is None or bitcode is None:
        pytest.skip("ROCm clang++ or device libraries not found")
    return clang, bitcode


def _debian_rocm_root(tmp_path: Path) -> Path:
    """CMake < 3.28 looks for hip-lang at <ROCm root>/lib/cmake/hip-lang; Debian installs the
    packages under /usr/lib/<multiarch>/cmake. A root of one-line configs that include Debian's
    lets CMake find them (an installed /opt/rocm needs none of this)."""
    root = tmp_path / "rocm-root"
    found = [p for p in glob.glob("/usr/lib/*/cmake/hip-lang/hip-lang-config.cmake") if Path(p).is_file()]
    if not found:
        pytest.skip(not_installed("the hip-lang CMake package", "libamdhip64-dev"))
    cmake_dir = Path(found[0]).parents[1]
    for pkg in cmake_dir.iterdir():
        for cfg in list(pkg.glob("*-config*.cmake")) + list(pkg.glob("*Config*.cmake")):
            if cfg.name.endswith(("-targets.cmake", "Targets.cmake")):
                continue
            shim = root / "lib" / "cmake" / pkg.name / cfg.name
            shim.parent.mkdir(parents=True, exist_ok=True)
            shim.write_text(f'include("{cfg}")\n')
    return root


def test_build_fixtures_are_cuda(nvcc):
    for kernel in (BUILD / "cmake_project/input/src/scale.cu", BUILD / "make_project/input/saxpy.cu",
                   *sorted((BUILD / "make_patterns/input").glob("*.cu"))):
        res = nvcc(kernel)
        assert res.returncode == 0, res.stderr
    # The cuRAND callers need curand.h, which a toolkit without the cuRAND component lacks (the
    # nvcc fixture adds the headers fetched from NVIDIA's cuRAND wheel).
    roots = [os.environ.get("CUDA_PATH", ""), "/usr/local/cuda", str(Path(shutil.which("nvcc")).resolve().parents[1])]
    includes = [Path(r) / "include" for r in roots if r] + [CUDA_LIBRARY_INCLUDE]
    if not any((d / "curand.h").is_file() for d in includes):
        pytest.skip("the CUDA toolkit has no curand.h (cuRAND component) and none was fetched "
                    f"({FETCH_CUDA_HEADERS}): the cuRAND callers are not checked with nvcc")
    for main in (BUILD / "cmake_project/input/src/main.cpp", BUILD / "make_project/input/main.cu"):
        res = nvcc(main)
        assert res.returncode == 0, res.stderr


def test_cmake_project_migrates_configures_and_builds(tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip(not_installed("cmake", "cmake"))
    work = _check_migration("cmake_project", "CMakeLists.txt", tmp_path)
    clang, bitcode = _hip_toolchain(HIPRAND, HIPRAND_CMAKE)
    root = _debian_rocm_root(tmp_path)
    build = tmp_path / "build"
    env = dict(HIP_ENV, CMAKE_PREFIX_PATH=str(root))
    configure = subprocess.run(
        ["cmake", "-S", str(work), "-B", str(build), f"-DCMAKE_HIP_COMPILER={clang}",
         f"-DCMAKE_HIP_COMPILER_ROCM_ROOT={root}",
         f"-DCMAKE_HIP_FLAGS=--rocm-path=/usr --rocm-device-lib-path={bitcode}"],
        capture_output=True, text=True, env=env)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert "The HIP compiler identification is Clang" in configure.stdout
    built = subprocess.run(["cmake", "--build", str(build), "--verbose"], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    # The .cu source was compiled by the HIP compiler for the target given as --offload-arch,
    # with the migrated options.
    hip_line = next(line for line in built.stdout.splitlines() if "-x hip" in line and "scale.cu" in line)
    assert f"--offload-arch={ARCH}" in hip_line and "-fgpu-default-stream=per-thread" in hip_line
    objects = sorted(p.name for p in build.rglob("*.o"))
    assert objects == ["main.cpp.o", "scale.cu.o"]
    # Linked against libamdhip64 and libhiprand; running it needs an AMD GPU, which CI lacks.
    assert (build / "scale_rng").is_file()


def test_make_project_migrates_and_builds(tmp_path):
    if shutil.which("make") is None:
        pytest.skip(not_installed("make", "make"))
    work = _check_migration("make_project", "Makefile", tmp_path)
    _hip_toolchain(HIPRAND)
    built = subprocess.run(["make", "-C", str(work)], capture_output=True, text=True, env=HIP_ENV)
    assert built.returncode == 0, built.stdout + built.stderr
    # The .cu pattern rule compiled both sources with hipcc for the AMD target.
    compiles = [line for line in built.stdout.splitlines() if line.startswith("hipcc") and " -c " in line]
    assert len(compiles) == 2 and all(f"--offload-arch={ARCH}" in line for line in compiles)
    assert (work / "main.o").is_file() and (work / "saxpy.o").is_file()
    # Linked with -lamdhip64 -lhiprand; running needs an AMD GPU.
    assert (work / "saxpy_rng").is_file()


def test_renamed_make_project_builds(tmp_path):
    """Issue 13: with --rename the sources become .hip files, and the pattern rule that compiles
    them (`%.o: %.cu saxpy.h`) follows, so make still finds how to build main.o and saxpy.o."""
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    work, res = _migrate("make_project", tmp_path, "--rename")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (work / "main.hip").is_file() and not (work / "main.cu").exists()
    assert "%.o: %.hip saxpy.h" in (work / "Makefile").read_text()
    _hip_toolchain()
    built = subprocess.run(["make", "-C", str(work)], capture_output=True, text=True, env=HIP_ENV)
    assert built.returncode == 0, built.stdout + built.stderr
    compiles = [line for line in built.stdout.splitlines() if line.startswith("hipcc") and " -c " in line]
    assert sorted(line.split(" -c ")[1].split()[0] for line in compiles) == ["main.hip", "saxpy.hip"]
    assert (work / "saxpy_rng").is_file()


def test_renamed_make_patterns_project_builds(tmp_path):
    """Issue 13: the three constructs that left a renamed Makefile building nothing: programs
    built straight from their source (`%: %.cu`), objects (`%.o: %.cu`), and the sources listed
    in a variable (`CUFILES := a.cu b.cu`, with `$(CUFILES:.cu=)` and `patsubst` over it)."""
    if shutil.which("make") is None:
        pytest.skip(not_installed("make", "make"))
    work, res = _migrate("make_patterns", tmp_path, "--rename")
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in work.glob("*.hip")) == ["scale.hip", "vector_add.hip"]
    assert not list(work.glob("*.cu"))
    makefile = (work / "Makefile").read_text()
    for line in ("CUFILES := vector_add.hip scale.hip", "PROGRAMS := $(CUFILES:.hip=)",
                 "OBJS := $(patsubst %.hip,%.o,$(CUFILES))", "%: %.hip", "%.o: %.hip"):
        assert line in makefile.splitlines(), makefile
    _hip_toolchain()
    built = subprocess.run(["make", "-C", str(work)], capture_output=True, text=True, env=HIP_ENV)
    assert built.returncode == 0, built.stdout + built.stderr
    hipcc = [line for line in built.stdout.splitlines() if line.startswith("hipcc")]
    assert len(hipcc) == 4 and all(f"--offload-arch={ARCH}" in line for line in hipcc), built.stdout
    for product in ("vector_add", "scale", "vector_add.o", "scale.o", "libkernels.a"):
        assert (work / product).is_file(), product


def test_without_offload_arch_architectures_are_reported_not_invented(tmp_path):
    work = tmp_path / "p"
    shutil.copytree(BUILD / "cmake_project" / "input", work)
    res = run_cli("fix", "--config", CONFIG, "--unsafe-fixes", "--format", "concise", work)
    assert res.returncode == 1
    text = (work / "CMakeLists.txt").read_text()
    assert "CMAKE_CUDA_ARCHITECTURES 70 80" in text and "gfx" not in text
    assert "HIP705" in res.stdout and "--offload-arch" in res.stdout
    assert "project(scale_rng LANGUAGES CXX HIP)" in text  # the rest is migrated all the same
