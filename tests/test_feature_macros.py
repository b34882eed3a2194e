"""The data of HIP210 / HIP211 checked against primary sources: every CUDA macro is defined by the
CUDA header or nvcc the rule names, every HIP header is the one HIP100/HIP120 include, every HIP
guard is the one the real headers of each ROCm version available here define, and the compiler
facts are what hipcc, hipRTC and nvcc do. Plus the condition evaluator the messages rely on."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import AT_EVERY_RELEASE, CUDA_LIBRARY_INCLUDE, ROCM_LIBRARY_INCLUDE, ROOT, run_cli

RULES = ROOT / "rules"
GUARDS = yaml.safe_load((RULES / "preprocessor" / "cuda-header-guards.yaml").read_text())["params"]
VERSIONS = yaml.safe_load((RULES / "preprocessor" / "cuda-version-macros.yaml").read_text())["params"]
CUDA_TOOLKIT_INCLUDE = Path("/usr/local/cuda/include")
RELEASE_HEADERS = ROOT / ".cache" / "rocm-release-headers"
# Debian package of each header folder (for the versions the messages cite)
PACKAGES = {"hip": "libamdhip64-dev", "hipblas": "libhipblas-dev", "hiprand": "libhiprand-dev",
            "hipfft": "libhipfft-dev", "hipsparse": "libhipsparse-dev", "hipsolver": "libhipsolver-dev",
            "rocblas": "librocblas-dev", "rocrand": "librocrand-dev", "rocsparse": "librocsparse-dev",
            "rocsolver": "librocsolver-dev", "miopen": "libmiopen-dev"}


def _cuda_header(name: str) -> Path | None:
    for base in (CUDA_TOOLKIT_INCLUDE, CUDA_LIBRARY_INCLUDE):
        if (base / name).is_file():
            return base / name
    return None


@pytest.mark.parametrize("macro", sorted(GUARDS["header_macros"]))
def test_cuda_header_defines_the_macro(macro):
    spec = GUARDS["header_macros"][macro]
    header = spec if isinstance(spec, str) else spec["header"]
    path = _cuda_header(header)
    if path is None:
        pytest.skip(f"{header} not here (CUDA toolkit or fetched CUDA library headers)")
    assert re.search(rf"^\s*#\s*define\s+{re.escape(macro)}\b", path.read_text(errors="replace"), re.M), \
        f"{path} does not define {macro}"


def test_hip_headers_are_the_include_rules_maps():
    runtime = yaml.safe_load((RULES / "api" / "cuda-runtime-headers.yaml").read_text())
    library = yaml.safe_load((RULES / "api" / "cuda-library-headers.yaml").read_text())
    maps = {**runtime["headers"], **library["headers"]}
    for cuda, hip in GUARDS["hip_headers"].items():
        assert maps.get(cuda) == hip, f"{cuda}: HIP210 says {hip}, the include rules {maps.get(cuda)}"
    roc = {**maps, **library["params"]["roc"]}
    for cuda, hip in GUARDS["roc_headers"].items():
        assert roc.get(cuda) == hip, f"{cuda} (--roc): HIP210 says {hip}, HIP120 {roc.get(cuda)}"


def _header_trees() -> list[tuple[str, Path, dict]]:
    """(label, include folder, Debian package versions) of every ROCm header set here."""
    trees = [("system", Path("/usr/include"), {}), ("fetched", ROCM_LIBRARY_INCLUDE, {})]
    manifest = RELEASE_HEADERS / "manifest.json"
    if manifest.is_file():
        suites = json.loads(manifest.read_text())["suites"]
        for suite, info in sorted(suites.items()):
            trees.append((suite, RELEASE_HEADERS / suite / "usr" / "include", info.get("packages", {})))
    return [t for t in trees if t[1].is_dir()]


_GUARD = re.compile(r"^\s*#\s*(?:ifndef\s+(\w+)|if\s+!\s*defined\s*\(?\s*(\w+))", re.M)


def _guard_of(text: str) -> str | None:
    """The include guard a header defines: its first `#ifndef X` followed by `#define X`."""
    m = _GUARD.search(text)
    if m is None:
        return None
    name = m.group(1) or m.group(2)
    return name if re.search(rf"^\s*#\s*define\s+{name}\b", text, re.M) else None


@pytest.mark.parametrize("header", sorted(GUARDS["hip_guards"]))
def test_hip_guards_match_the_real_headers(header):
    spec = GUARDS["hip_guards"][header]
    seen: set[str] = set()
    found = 0
    for label, tree, packages in _header_trees():
        path = tree / header
        if not path.is_file():
            continue
        found += 1
        guard = _guard_of(path.read_text(errors="replace"))
        if not spec["guards"]:
            assert guard is None, f"{label} {path}: guard {guard}, the rule says it has none"
            continue
        assert guard in spec["guards"], f"{label} {path}: guard {guard} not in {spec['guards']}"
        seen.add(guard)
        version = packages.get(PACKAGES[header.split("/")[0]])
        if version:
            upstream = re.split(r"[-+~]", version)[0]
            assert upstream in spec["checked"], f"{header}: {label} has version {upstream}, not cited"
    if not found:
        pytest.skip(f"no copy of {header} here")
    if spec["guards"] and len(_header_trees()) > 2:
        assert seen == set(spec["guards"]), f"{header}: guards seen {seen}, listed {spec['guards']}"


NVCC_FLAGS = ["--extended-lambda", "--expt-relaxed-constexpr", "-rdc=true", "-G"]


@pytest.mark.integration
def test_nvcc_defines_the_compiler_macros(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    src = tmp_path / "m.cu"
    src.write_text("int x;\n")
    proc = subprocess.run([nvcc, "-E", "-Xcompiler", "-dM", *NVCC_FLAGS, str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    defined = set(re.findall(r"^#define (\w+)", proc.stdout, re.M))
    for macro, spec in VERSIONS["macros"].items():
        if spec["cuda"].startswith("nvcc defines it"):
            assert macro in defined, f"nvcc does not define {macro}"


def test_cuda_headers_define_the_version_macros():
    for macro, spec in VERSIONS["macros"].items():
        m = re.match(r"CUDA's (\S+) defines it", spec["cuda"])
        if m is None:
            continue
        path = _cuda_header(m.group(1))
        if path is None:
            continue
        assert re.search(rf"^\s*#\s*define\s+{macro}\b", path.read_text(errors="replace"), re.M), \
            f"{path} does not define {macro}"


def _hipcc() -> str:
    exe = shutil.which("hipcc")
    if exe is None:
        pytest.skip("hipcc not installed")
    return exe


@pytest.mark.integration
@AT_EVERY_RELEASE
def test_hipcc_defines_none_of_the_version_macros(tmp_path, hipcc):
    src = tmp_path / "m.hip"
    src.write_text("#include <hip/hip_runtime.h>\n")
    defined: set[str] = set()
    for side in ("--cuda-host-only", "--cuda-device-only"):  # one at a time: no offload bundler needed
        proc = subprocess.run([*hipcc.toolchain.hipcc, "-x", "hip", "--offload-arch=gfx90a", side, "-E", "-dM",
                               str(src)], capture_output=True, text=True, env=hipcc.toolchain.env)
        assert proc.returncode == 0, proc.stderr
        defined |= set(re.findall(r"^#define (\w+)", proc.stdout, re.M))
    assert "__HIPCC__" in defined and "HIP_INCLUDE_HIP_HIP_RUNTIME_H" in defined
    assert not defined & set(VERSIONS["macros"]), defined & set(VERSIONS["macros"])
    assert "__CUDACC__" not in defined


@pytest.mark.integration
def test_hiprtc_defines_hipcc_rtc(tmp_path):
    """`__CUDACC_RTC__` -> `__HIPCC_RTC__`: hipRTC (HIP 5.2, no GPU needed to compile) defines
    the HIP macro and not the CUDA one."""
    program = tmp_path / "rtc.cpp"
    program.write_text(r'''
#include <hip/hiprtc.h>
#include <cstdio>
int main() {
  const char* src = "#ifndef __HIPCC_RTC__\n#error no __HIPCC_RTC__\n#endif\n"
                    "#ifdef __CUDACC_RTC__\n#error __CUDACC_RTC__\n#endif\n"
                    "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 0; }\n";
  hiprtcProgram p;
  if (hiprtcCreateProgram(&p, src, "k.hip", 0, nullptr, nullptr) != HIPRTC_SUCCESS) return 2;
  const char* opts[] = {"--offload-arch=gfx90a"};
  hiprtcResult r = hiprtcCompileProgram(p, 1, opts);
  size_t n = 0;
  hiprtcGetProgramLogSize(p, &n);
  static char log[1 << 16];
  if (n < sizeof log) hiprtcGetProgramLog(p, log);
  std::printf("%s", log);
  return r == HIPRTC_SUCCESS ? 0 : 1;
}
''')
    exe = tmp_path / "rtc"
    env = dict(os.environ, HIP_PLATFORM="amd")
    built = subprocess.run([_hipcc(), "--offload-arch=gfx90a", "-o", str(exe), str(program)],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr


_BRANCHES = ("#include <cuda_runtime.h>\n#include <cstdio>\n"
             "int main() {\n"
             "#if CUDART_VERSION >= 9000\n"
             "  std::printf(\"new\\n\");\n"
             "#else\n"
             "  old_runtime_fallback();\n"
             "#endif\n"
             "  return 0;\n"
             "}\n")


def test_condition_findings_name_the_lines_they_decide(tmp_path):
    """A reported #if says which lines its outcome decides (to its #endif, the #else included)."""
    (tmp_path / "a.cu").write_text(_BRANCHES + "#ifdef X\n#elif CUDA_VERSION > 3\nint b;\n#else\nint c;\n#endif\n")
    proc = run_cli("check", "--isolated", "--no-cache", "--select", "HIP211", "--target-rocm", "5.2",
                   "--format", "json", "a.cu", cwd=tmp_path)
    got = [(f["line"], f["data"]["governs_lines"]) for f in json.loads(proc.stdout)["findings"]]
    assert got == [(4, [4, 8]), (12, [12, 16])]


def test_error_in_a_decided_branch_is_predicted(tmp_path, hipcc):
    """bench/real_world.py counts hipcc's error in the #else that migration now compiles as
    predicted by the finding on its #if (cuda-samples' threadFenceReduction: print_NVCC_min_spec)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from realworld.diagnostics import FirstError, Location, first_error
        from realworld.harness import FindingIndex
    finally:
        sys.path.remove(str(ROOT / "bench"))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.cu").write_text(_BRANCHES)
    out = tmp_path / "out"
    assert run_cli("fix", "--isolated", "--no-cache", "--target-rocm", "5.2", "--output-dir", out,
                   tmp_path / "in").returncode == 1  # HIP211 remains
    proc = run_cli("check", "--isolated", "--no-cache", "--target-rocm", "5.2", "--format", "json", ".", cwd=out)
    index = FindingIndex(json.loads(proc.stdout)["findings"])
    compiled = subprocess.run([_hipcc(), "-x", "hip", "--offload-arch=gfx90a", "-fsyntax-only", "-std=c++17", "a.cu"],
                              cwd=out, capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"))
    error = first_error(compiled.stderr)
    assert error is not None and error.location == Location("a.cu", 7), compiled.stderr
    in_tree = lambda p: (out / p).is_file()  # noqa: E731
    assert index.predict(error, in_tree)[1] == "HIP211 at a.cu:4 (decides line 7)"
    # negative control: the same error after the #endif is not the #if's
    assert index.predict(FirstError(Location("a.cu", 9), error.message), in_tree)[1] == ""
