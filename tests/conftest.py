"""Shared test helpers: run the CLI in-process or as a real subprocess, and the real compilers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference"
# Library headers the system packages lack, fetched by tests/harness (tools/install-test-deps.sh does it): the ROCm
# libraries Debian 12 does not package, and the CUDA math libraries the CUDA 13 toolkit here lacks.
ROCM_LIBRARY_INCLUDE = Path(os.environ.get("CUDA2HIP_ROCM_LIBRARY_HEADERS",
                                           ROOT / ".cache" / "rocm-library-headers")) / "usr" / "include"
FETCH_ROCM_HEADERS = "bash tests/harness/fetch_rocm_library_headers.sh .cache/rocm-library-headers"
CUDA_LIBRARY_INCLUDE = Path(os.environ.get("CUDA2HIP_CUDA_LIBRARY_HEADERS",
                                           ROOT / ".cache" / "cuda-library-headers")) / "include"
FETCH_CUDA_HEADERS = "python tests/harness/fetch_cuda_library_headers.py .cache/cuda-library-headers"
# The HIP/ROCm headers of each Debian suite (bookworm HIP 5.2, trixie 5.7, sid 6.4), one tree per suite.
RELEASE_HEADERS = Path(os.environ.get("CUDA2HIP_ROCM_RELEASE_HEADERS", ROOT / ".cache" / "rocm-release-headers"))
FETCH_RELEASE_HEADERS = "python tests/harness/fetch_rocm_release_headers.py .cache/rocm-release-headers"
# Installs every Debian package of tools/test-deps.txt and fetches both header trees (.ci/run runs it).
INSTALL_TEST_DEPS = "bash tools/install-test-deps.sh"


# Every `python -m cuda2hip` a test starts runs this checkout, not whatever copy is installed
# (an editable install of another clone or worktree would otherwise be what the tests test).
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def not_installed(what: str, packages: str) -> str:
    """The reason a test skips when a system package it needs is missing: what, and how to get it."""
    return f"{what} not installed (apt-get install {packages}; every test tool at once: {INSTALL_TEST_DEPS})"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # Tests never share the user's rule cache (and never leave one behind).
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def run_cli(*args, cwd=None, input=None, env=None) -> subprocess.CompletedProcess:
    """Run `python -m cuda2hip ARGS` as a real process (exit codes, stdout/stderr as users see)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "cuda2hip", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, env=full_env)


@pytest.fixture
def cli():
    return run_cli


def _hipcc() -> str | None:
    return shutil.which("hipcc")


@pytest.fixture
def hipcc():
    """Compile HIP source for an AMD target (syntax and semantics, no GPU needed).

    Debian's hipcc picks the NVIDIA platform when nvcc is on PATH, so HIP_PLATFORM=amd is set.
    """
    exe = _hipcc()
    if exe is None:
        pytest.skip(not_installed("hipcc", "hipcc"))

    def compile_hip(path: Path, *extra: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, HIP_PLATFORM="amd")
        return subprocess.run([exe, "-x", "hip", "--offload-arch=gfx90a", "-fsyntax-only", "-w",
                               *extra, str(path)], capture_output=True, text=True, env=env)

    return compile_hip


@pytest.fixture
def nvcc():
    """Prove a CUDA fixture is valid CUDA before migrating it. The fetched CUDA library headers
    (cuBLAS, cuRAND, ..., when present) are on the include path."""
    exe = shutil.which("nvcc")
    if exe is None:
        pytest.skip("nvcc not installed (the CUDA toolkit)")
    libraries = [f"-I{CUDA_LIBRARY_INCLUDE}"] if CUDA_LIBRARY_INCLUDE.is_dir() else []

    def compile_cuda(path: Path, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([exe, "-c", "-o", os.devnull, "-x", "cu", *libraries, *extra, str(path)],
                              capture_output=True, text=True)

    return compile_cuda
