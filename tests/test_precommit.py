"""The real pre-commit (from PyPI) runs this repository's hooks (.pre-commit-hooks.yaml) in a
temporary git repository, with `pre-commit try-repo`.

try-repo installs the hook repository at a commit, so the hook source is a temporary git repo
holding the working tree as it is (tracked and new files), committed: the test checks what is
on disk, not what happens to be committed. pre-commit installs it with pip into its own
virtualenv (non-editable), which also proves the package installs and finds its rules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, not_installed

pytestmark = [pytest.mark.integration, pytest.mark.skipif(shutil.which("git") is None, reason=not_installed("git", "git"))]

FINDINGS = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaMalloc(&p, 16); cudaFree(p); }\n"
CLEAN = "#include <hip/hip_runtime.h>\nvoid f(float* p) { hipMalloc(&p, 16); hipFree(p); }\n"
FIXED = CLEAN


def _git(*args, cwd):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This repository's working tree, committed in a temporary repo."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, files):
        src = ROOT / name
        if not src.is_file():
            continue  # deleted in the working tree
        dest = repo / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "hooks under test", cwd=repo)
    return repo


def _try_repo(hook_repo, hook, project, *extra):
    # try-repo installs the hooks into a fresh store each time (about 20 s: pip installs the
    # package and its dependencies), so each test makes one call.
    env = dict(os.environ, PRE_COMMIT_COLOR="never")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)  # conftest's: the hook runs the package pre-commit installed
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, *extra],
                          cwd=project, capture_output=True, text=True, env=env, timeout=900)


def _project(tmp_path, name, text) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / name).write_text(text)
    (project / "notes.txt").write_text("cudaMalloc in prose is not a source file\n")
    _git("add", "-A", cwd=project)
    return project


def test_check_hook_fails_on_a_staged_file_with_findings(hook_repo, tmp_path):
    project = _project(tmp_path, "kernel.cu", FINDINGS)
    res = _try_repo(hook_repo, "cuda2hip-check", project)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "cuda2hip check" in out and "Failed" in out
    assert "kernel.cu:2:" in out and "HIP101" in out  # concise format: path:line:col: CODE
    assert "notes.txt" not in out  # the files: pattern keeps non-sources out
    assert (project / "kernel.cu").read_text() == FINDINGS  # the check hook never writes


def test_check_hook_passes_on_a_clean_file(hook_repo, tmp_path):
    project = _project(tmp_path, "kernel.cuh", CLEAN)
    res = _try_repo(hook_repo, "cuda2hip-check", project)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Passed" in res.stdout


def test_fix_hook_rewrites_the_file(hook_repo, tmp_path):
    project = _project(tmp_path, "kernel.cu", FINDINGS)
    res = _try_repo(hook_repo, "cuda2hip-fix", project)
    out = res.stdout + res.stderr
    # pre-commit fails a hook that modified files, so that the user reviews and re-stages them.
    assert res.returncode == 1, out
    assert "files were modified by this hook" in out
    assert (project / "kernel.cu").read_text() == FIXED


def test_fix_hook_leaves_headers_that_are_not_staged_alone(hook_repo, tmp_path):
    # kernel.cu is staged; the header it includes is not (untracked: pre-commit does not stash
    # it away), so the hook must not write it: it reports it on the include line instead.
    header = '#pragma once\n#include <cuda_runtime.h>\ninline void check(cudaError_t e) { (void)e; }\n'
    project = _project(tmp_path, "kernel.cu", '#include "common.h"\n' + FINDINGS)
    (project / "common.h").write_text(header)
    res = _try_repo(hook_repo, "cuda2hip-fix", project)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert (project / "common.h").read_text() == header
    assert (project / "kernel.cu").read_text() == '#include "common.h"\n' + FIXED
    assert "kernel.cu:1:1: HIP005" in out and "cuda2hip fix common.h" in out



@pytest.mark.parametrize("hook", ["cuda2hip-check", "cuda2hip-fix"])
def test_a_staged_file_named_like_an_option_is_a_file_to_the_hook(hook_repo, tmp_path, hook):
    """pre-commit appends the staged names to the hook's entry: a file `x.cu` in a folder named
    `--output=..` was read as `--output=../x.cu`, and the report overwrote ../x.cu, outside the
    repository. The entries end with `--`."""
    project = _project(tmp_path, "kernel.cu", FINDINGS)
    odd = project / "--output=.."
    odd.mkdir()
    (odd / "x.cu").write_text(FINDINGS)
    _git("add", "-A", cwd=project)
    res = _try_repo(hook_repo, hook, project)
    out = res.stdout + res.stderr
    assert not (tmp_path / "x.cu").exists(), out
    assert res.returncode == 1, out
    if hook == "cuda2hip-check":
        assert "--output=../x.cu:2:" in out and "kernel.cu:2:" in out, out
    else:
        assert (odd / "x.cu").read_text() == FIXED and (project / "kernel.cu").read_text() == FIXED, out
