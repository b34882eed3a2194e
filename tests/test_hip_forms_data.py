"""The data of rules/api/data/forms/ (tools/generate_hip_forms.py) against the real compiler: what
it says HIP 5.2 lacks, Debian 12's hipcc (HIP 5.2) rejects, and what it does not list compiles;
and the committed data is what the generator gives from the headers here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration

FORMS = ROOT / "rules" / "api" / "data" / "forms"
GENERATOR = ROOT / "tools" / "generate_hip_forms.py"


def _data(name: str) -> dict:
    return json.loads((FORMS / f"{name}.json").read_text())


def _lacking_at(statuses_or_since, releases, rocm="5.2"):
    """Whether a struct's field (`since`: None, "ROCM" or "ROCM -DNAME") is missing at `rocm`
    without opt-in macros."""
    return (statuses_or_since is None or " " in statuses_or_since
            or releases.index(statuses_or_since) > releases.index(rocm))


def test_struct_fields_hip_5_2_lacks_do_not_compile(tmp_path, hipcc):
    data = _data("struct-fields")
    lines, claims = ["#include <hip/hip_runtime.h>", "#include <hip/hip_cooperative_groups.h>"], {}
    assert any("::" in cuda for cuda in data["structs"])  # cooperative groups' classes are in
    for cuda, entry in data["structs"].items():
        for path, since in entry["fields"].items():
            if "5.2" in entry["records"] and _lacking_at(since, data["releases"]):
                if "::" in cuda:  # a class's member (thread_block_tile is a template)
                    cls = entry["hip"] + ("<32>" if cuda.endswith("_tile") else "")
                    lines.append(f"__device__ void f{len(lines)}() {{ (void)&{cls}::{path}; }}")
                else:
                    lines.append(f"void f{len(lines)}({entry['hip']}* p) {{ (void)p->{path}; }}")
                claims[len(lines)] = f"{cuda}.{path}"
    # fields and members HIP 5.2 has (controls: the check is not vacuous)
    lines.append("void g(hipDeviceProp_t* p, hipPointerAttribute_t* a) { (void)p->multiProcessorCount; "
                 "(void)a->memoryType; }")
    lines.append("__device__ void h() { (void)&cooperative_groups::thread_block::size; "
                 "(void)&cooperative_groups::thread_block_tile<32>::thread_rank; }")
    src = tmp_path / "fields.hip"
    src.write_text("\n".join(lines) + "\n")
    proc = hipcc(src, "-ferror-limit=0")
    failed = {int(n) for n in re.findall(r"fields\.hip:(\d+):\d+: error: no member named", proc.stderr)}
    assert failed == set(claims), (sorted(claims[n] for n in set(claims) - failed),
                                   sorted(failed - set(claims)), proc.stderr[-3000:])


def test_device_functions_hip_5_2_lacks_are_undeclared(tmp_path, hipcc):
    data = _data("device-functions")
    lines, claims = ["#include <hip/hip_runtime.h>", "#include <hip/hip_fp16.h>"], {}
    for name, (_header, statuses) in data["functions"].items():
        if statuses[0] == "no" or (isinstance(statuses[0], str) and statuses[0].startswith("-D")):
            lines.append(f"__device__ void f{len(lines)}() {{ (void)&{name}; }}")
            claims[len(lines)] = name
    for name in ("__ldg", "atomicAdd", "__popc", "__expf", "__shfl_down", "atomicAdd_system"):  # HIP 5.2 has them
        assert name not in claims
        lines.append(f"__device__ void f{len(lines)}() {{ (void)&{name}; }}")
    src = tmp_path / "device.hip"
    src.write_text("\n".join(lines) + "\n")
    proc = hipcc(src, "-ferror-limit=0", "--cuda-device-only")
    # (glibc declares some of the names, `__isinfl`, as host functions)
    undeclared = {int(n) for n in re.findall(r"device\.hip:(\d+):\d+: error: (?:use of undeclared identifier|"
                                             r"reference to __host__ function)",
                                             proc.stderr)}
    assert undeclared == set(claims), (sorted(claims[n] for n in set(claims) - undeclared),
                                       sorted(undeclared - set(claims)))


def test_device_function_overloads_hip_5_2_lacks_do_not_compile(tmp_path, hipcc):
    """Where the data says HIP 5.2 declares a function for some of CUDA's parameter types only,
    a call with the types it lacks is an error and one with the types it has compiles."""
    data = _data("device-functions")
    lines, fails = ["#include <hip/hip_runtime.h>", "#include <hip/hip_fp16.h>"], {}
    for name, (_header, statuses) in data["functions"].items():
        if not isinstance(statuses[0], dict):
            continue
        for sig, bad in [(s, True) for s in statuses[0]["lacks"]] + [(s, False) for s in statuses[0]["has"]]:
            params = ", ".join(f"{t} a{i}" for i, t in enumerate(sig))
            args = ", ".join(f"a{i}" for i in range(len(sig)))
            lines.append(f"__device__ void f{len(lines)}({params}) {{ (void){name}({args}); }}")
            fails[len(lines)] = bad
    assert any(fails.values()) and not all(fails.values())
    src = tmp_path / "overloads.hip"
    src.write_text("\n".join(lines) + "\n")
    proc = hipcc(src, "-ferror-limit=0", "--cuda-device-only")
    failed = {int(n) for n in re.findall(r"overloads\.hip:(\d+):\d+: error:", proc.stderr)}
    assert failed == {n for n, bad in fails.items() if bad}, proc.stderr[-3000:]


def test_kernel_parameters_hip_takes_as_const_void_pointer(tmp_path, hipcc):
    """HIP 5.2 rejects a kernel passed directly where the data says there is no template
    overload for that argument count, and accepts it where it says there is one."""
    data = _data("calls")
    lines = ["#include <hip/hip_runtime.h>", "__global__ void k(float*) {}"]
    expect_fail = {}
    for cuda, entry in data["functions"].items():
        i, row = entry["kernel_param"], entry["releases"].get("5.2")
        if i is None or row is None:
            continue
        n = max(hi for lo, hi in row["arities"])
        args = ", ".join("k" if j == i else "{}" for j in range(n))
        lines.append(f"void f{len(lines)}() {{ (void){entry['hip']}({args}); }}")
        fails = not any(lo <= n <= hi for lo, hi in row["kernel_templates"])
        expect_fail[len(lines)] = fails
    src = tmp_path / "kernels.hip"
    src.write_text("\n".join(lines) + "\n")
    proc = hipcc(src, "-ferror-limit=0")
    failed = {int(n) for n in re.findall(r"kernels\.hip:(\d+):\d+: error: no matching function", proc.stderr)}
    assert failed == {n for n, f in expect_fail.items() if f}, proc.stderr[-3000:]
    assert any(not f for f in expect_fail.values())  # a template overload is among them


def test_generated_data_is_current():
    pytest.importorskip("clang.cindex", reason="the libclang bindings (pip install clang~=15.0) are not installed")
    sys.path.insert(0, str(ROOT / "tools"))
    from header_forms import releases

    _found, missing = releases.available()
    if missing or shutil.which("nvcc") is None:
        pytest.skip("headers to regenerate from are missing: " + "; ".join(missing or ["nvcc"]))
    proc = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
