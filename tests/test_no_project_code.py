"""cuda2hip never imports code from the directory it runs in or from the tree it checks
(SECURITY.md): a repository's `shutil.py`, `click.py`, `tempfile.py` or `cuda2hip/` package,
in the working directory and in the checked tree, is never imported, whichever documented way
the command is started (the console script, `python -P -m cuda2hip`) and by `python -m
cuda2hip` too, except for a `cuda2hip/` package in the working directory, which the interpreter
itself imports before any of cuda2hip's code runs (hence `-P` in the documentation)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

MODULES = ("shutil", "click", "tempfile", "jinja2", "yaml", "msgspec", "pathspec", "tree_sitter", "libcst")
KERNEL = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"
PYTHON_KERNEL = "import cupy\nk = cupy.RawKernel(r'''__global__ void k() { __syncthreads(); }''', 'k')\n"
COMMANDS = [["check", "."], ["check", "--format", "html", "-o", "../report.html", "."], ["fix", "--diff", "."],
            ["fix", "."], ["fix", "--output-dir", "../out", "."], ["rules"], ["explain", "HIP101"],
            ["check", "--format", "sarif", "-o", "../report.sarif", "."]]


def _plant(where: Path, marks: Path, package: bool) -> None:
    """Modules that record being imported (and then fail, as planted code would do harm)."""
    for name in MODULES:
        (where / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(marks)!r}, {name!r} + '-' + {str(where.name)!r}), 'w').close()\n"
            f"raise SystemExit('planted {name} imported')\n")
    if package:
        pkg = where / "cuda2hip"
        pkg.mkdir()
        for name in ("__init__", "__main__", "cli", "launch"):
            (pkg / f"{name}.py").write_text(
                f"import os\nopen(os.path.join({str(marks)!r}, 'cuda2hip-{name}-' + {str(where.name)!r}), 'w').close()\n")


def _project(tmp_path: Path, package_in_cwd: bool) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernel.cu").write_text(KERNEL)
    (project / "kernels.py").write_text(PYTHON_KERNEL)
    (project / "Makefile").write_text("all:\n\tnvcc -o k kernel.cu -lcudart\n")
    _plant(project, marks, package_in_cwd)
    sub = project / "tree"  # a checked folder below the working directory, with its own plants
    sub.mkdir()
    (sub / "more.cu").write_text(KERNEL)
    _plant(sub, marks, True)
    return project, marks


def _invocations() -> dict[str, list[str]]:
    found = {"python -P -m": [sys.executable, "-P", "-m", "cuda2hip"]}
    script = Path(sys.executable).parent / "cuda2hip"
    if script.is_file():
        found["console script"] = [str(script)]
    return found


@pytest.mark.parametrize("how", ["console script", "python -P -m"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_planted_modules_are_never_imported(tmp_path, how, command):
    invocation = _invocations().get(how)
    if invocation is None:
        pytest.skip(f"no `cuda2hip` console script beside {sys.executable} (pip install -e .)")
    project, marks = _project(tmp_path, package_in_cwd=True)
    r = subprocess.run([*invocation, *command], cwd=project, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert sorted(os.listdir(marks)) == [], r.stdout[-2000:] + r.stderr[-2000:]
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    assert "planted" not in r.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_python_m_never_imports_planted_libraries_from_the_working_directory(tmp_path, command):
    """`python -m cuda2hip` puts the working directory first on the import path; cuda2hip takes
    it off before it imports anything else."""
    project, marks = _project(tmp_path, package_in_cwd=False)
    r = subprocess.run([sys.executable, "-m", "cuda2hip", *command], cwd=project, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert sorted(os.listdir(marks)) == [], r.stdout[-2000:] + r.stderr[-2000:]
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]


def _loaded_by_the_interpreter_at_start_up(cwd: Path) -> set[str]:
    """Modules the interpreter's own start-up imports (`site` and the environment's `.pth`
    files, e.g. one that imports certifi, and so tempfile), before any of cuda2hip's code runs:
    with the working directory on PYTHONPATH no program can keep those from the tree."""
    r = subprocess.run([sys.executable, "-P", "-c", "import sys; print(' '.join(sys.modules))"], cwd=cwd,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return set(r.stdout.split())


def test_a_relative_or_working_directory_import_path_is_dropped(tmp_path):
    """PYTHONPATH=. (or the working directory's full path) names the checked tree too."""
    project, marks = _project(tmp_path, package_in_cwd=False)
    for name in _loaded_by_the_interpreter_at_start_up(tmp_path) & set(MODULES):
        (project / f"{name}.py").unlink()
    for entry in (".", str(project), ""):
        r = subprocess.run([sys.executable, "-P", "-m", "cuda2hip", "fix", "--diff", "."], cwd=project,
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), entry])})
        assert sorted(os.listdir(marks)) == [] and r.returncode == 1, (entry, r.stdout[-2000:] + r.stderr[-2000:])


def test_the_documented_invocations_are_the_safe_ones():
    """README and SECURITY.md run the console script or `python -P -m cuda2hip`, never a bare
    `python -m cuda2hip`, whose working directory could hold a `cuda2hip/` package."""
    for doc in ("README.md", "SECURITY.md", *(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))):
        text = (ROOT / doc).read_text()
        for line in text.splitlines():
            if "-m cuda2hip" in line and "-P -m cuda2hip" not in line:
                assert "never" in line or "not" in line, (doc, line)

