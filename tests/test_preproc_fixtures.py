"""Issue 12, section 2: the HIP runtime include (HIP121) and CUDA header guards / version macros
(HIP210, HIP211) on small multi-file projects, the way real code has them.

For each project `fixtures/preproc/NAME/`:
- every file of `input/` is valid CUDA: nvcc compiles it as a unit (headers too: a header with
  device code is compiled on its own by projects that use it as a unit);
- `fix --output-dir` of `input/` (with --target-rocm 5.2) gives `expected/`, and a second `fix`
  of `expected/` changes nothing;
- every file of `expected/` compiles with the real hipcc (HIP 5.2), and, migrated with
  `--target-rocm 7.2` / `6.4` (feature_macros: the same tree; runtime_include: one more runtime
  include), with HIP 7.2 and 6.4;
- negative controls (HIP 5.2's headers): undoing the capability in the expected output (the runtime include after
  cooperative groups, inside `extern "C"`, the CUDA guard instead of the HIP one, one spelling of
  a guard that changed between versions) fails to compile, so the compile checks are not vacuous;
- `findings.txt` lists what `check` still reports on the migrated tree (HIP21x), with what each
  condition evaluates to.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import (CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, FETCH_ROCM_HEADERS, FIXTURES, ROCM_LIBRARY_INCLUDE,
                      release_params, run_cli)

pytestmark = pytest.mark.rules

PREPROC = FIXTURES / "preproc"
PROJECTS = ("runtime_include", "feature_macros")
UPDATE = os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1"
FIX = ("fix", "--isolated", "--no-cache", "--target-rocm", "5.2")


def _files(project: str, part: str) -> list[Path]:
    return sorted(p for p in (PREPROC / project / part).iterdir() if p.is_file())


def _migrate(project: str, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    proc = run_cli(*FIX, "--output-dir", out, PREPROC / project / "input")
    assert proc.returncode in (0, 1), proc.stderr
    return out


@pytest.mark.parametrize("project", PROJECTS)
def test_inputs_are_valid_cuda(project, nvcc):
    if project == "feature_macros" and not (CUDA_LIBRARY_INCLUDE / "cublas_v2.h").is_file():
        pytest.skip(f"the CUDA library headers are not fetched ({FETCH_CUDA_HEADERS})")
    for path in _files(project, "input"):
        proc = nvcc(path, "-std=c++17", f"-I{path.parent}")
        assert proc.returncode == 0, f"{path.name}: {proc.stderr}"


@pytest.mark.parametrize("project", PROJECTS)
def test_migration_gives_expected_tree(project, tmp_path):
    out = _migrate(project, tmp_path)
    expected = PREPROC / project / "expected"
    if UPDATE:
        shutil.rmtree(expected, ignore_errors=True)
        shutil.copytree(out, expected)
    got = {p.name: p.read_text() for p in sorted(out.iterdir())}
    want = {p.name: p.read_text() for p in _files(project, "expected")}
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], f"{project}/{name}: migrated output differs"


@pytest.mark.parametrize("project", PROJECTS)
def test_second_fix_changes_nothing(project, tmp_path):
    work = tmp_path / "tree"
    shutil.copytree(PREPROC / project / "expected", work)
    proc = run_cli(*FIX, "--diff", "--fail-on", "error", ".", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "+++" not in proc.stdout


def _library_flags() -> list[str]:
    if not (ROCM_LIBRARY_INCLUDE / "hipblas" / "hipblas.h").is_file():
        pytest.skip(f"hipBLAS/hipFFT headers not fetched ({FETCH_ROCM_HEADERS})")
    return [f"-I{ROCM_LIBRARY_INCLUDE}"]


def _compile(hipcc, path: Path, *extra: str):
    return hipcc(path, "-std=c++17", f"-I{path.parent}", *extra)


@pytest.mark.parametrize("project,hipcc", release_params(PROJECTS), indirect=["hipcc"])
def test_expected_tree_compiles_with_hipcc(project, hipcc, tmp_path):
    if hipcc.release == "5.2":
        extra = _library_flags() if project == "feature_macros" else []
        paths = _files(project, "expected")
    else:  # migrated for the release; its own tree has the library headers
        extra = []
        out = tmp_path / "out"
        proc = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", hipcc.release, "--output-dir", out,
                       PREPROC / project / "input")
        assert proc.returncode in (0, 1), proc.stderr
        paths = sorted(p for p in out.iterdir() if p.is_file())
        assert [p.name for p in paths] == [p.name for p in _files(project, "expected")]
    for path in paths:
        proc = _compile(hipcc, path, *extra)
        assert proc.returncode == 0, f"{path.name}: {proc.stderr}"


def _variant(tmp_path: Path, project: str, name: str, old: str, new: str) -> Path:
    """A copy of the expected tree with one edit in one file."""
    tree = tmp_path / "variant"
    shutil.copytree(PREPROC / project / "expected", tree)
    text = (tree / name).read_text()
    assert old in text, f"{name} no longer holds {old!r}"
    (tree / name).write_text(text.replace(old, new, 1))
    return tree


RUNTIME_FIRST = "#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n"


@pytest.mark.parametrize("name,old,new,error", [
    # the runtime after cooperative groups, as a plain rewrite of the includes in place would leave it
    ("jacobi.cu", RUNTIME_FIRST, "#include <hip/hip_cooperative_groups.h>\n#include <hip/hip_runtime.h>\n",
     "hipBlockDim_z"),
    # no runtime added ahead of cooperative groups where it comes through a later project header
    ("transitive.cu", RUNTIME_FIRST, "#include <hip/hip_cooperative_groups.h>\n", "hipBlockDim_z"),
    # a device header compiled on its own without the include
    ("kernels.cuh", RUNTIME_FIRST, "#include <hip/hip_cooperative_groups.h>\n", "hipBlockDim_z"),
    # the runtime include left inside extern "C"
    ("stream_api.h", "#include <hip/hip_runtime.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n",
     "#ifdef __cplusplus\nextern \"C\" {\n#endif\n#include <hip/hip_runtime.h>\n", "C++ linkage"),
    # vector types without the include
    ("vec_math.h", "#include <hip/hip_runtime.h>\n", "", "float3"),
])
def test_runtime_include_negative_controls(name, old, new, error, tmp_path, hipcc):
    tree = _variant(tmp_path, "runtime_include", name, old, new)
    proc = _compile(hipcc, tree / name)
    assert proc.returncode != 0 and error in proc.stderr, proc.stderr


@pytest.mark.parametrize("old,new,error", [
    # the CUDA guard kept: findDevice vanishes, as in cuda-samples' helper_cuda.h
    ("#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_H", "#ifdef __CUDA_RUNTIME_H__", "findDevice"),
    ("#ifdef HIPBLAS_H", "#ifdef CUBLAS_API_H_", "errorName"),
    # hipSPARSE's guard changed after 5.3 (the HIP 5.2 system here has 5.3.3): one spelling is not enough
    ("#if defined(_HIPSPARSE_H_) || defined(HIPSPARSE_H)", "#ifdef HIPSPARSE_H", "errorName"),
])
def test_feature_macro_negative_controls(old, new, error, tmp_path, hipcc):
    flags = _library_flags()
    tree = _variant(tmp_path, "feature_macros", "helper_gpu.h", old, new)
    proc = _compile(hipcc, tree / "main.cu", *flags)
    assert proc.returncode != 0 and error in proc.stderr, proc.stderr


def test_feature_macro_findings_after_migration():
    """What a user still reads on the migrated tree: each version test, with its value."""
    tree = PREPROC / "feature_macros" / "expected"
    proc = run_cli("check", "--isolated", "--no-cache", "--target-rocm", "5.2", "--format", "json", ".", cwd=tree)
    assert proc.returncode in (0, 1), proc.stderr
    got = [f"{f['path']}:{f['line']}:{f['column']} {f['code']} {json.dumps(f['data'], sort_keys=True)}"
           for f in json.loads(proc.stdout)["findings"] if f["code"].startswith("HIP21")]
    listing = PREPROC / "feature_macros" / "findings.txt"
    if UPDATE:
        listing.write_text("".join(line + "\n" for line in got))
    assert got == listing.read_text().splitlines()
