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
# The syntax-check compiler of each ROCm release (7.2, 6.4: fetched; 5.2: the system hipcc).
sys.path.insert(0, str(ROOT / "tests" / "harness"))
import hip_toolchains  # noqa: E402

# HIPIFY's API tables (rocm-7.0.2, from Debian's hipify source package): the input of
# tools/generate_rule_data.py and `cuda2hip coverage --tables`.
HIPIFY_TABLES = Path(os.environ.get("CUDA2HIP_HIPIFY_TABLES", ROOT / ".cache" / "hipify-tables"))
FETCH_HIPIFY_TABLES = "python tests/harness/fetch_hipify_tables.py .cache/hipify-tables"
# Installs every Debian package of tools/test-deps.txt and fetches both header trees (.ci/run runs it).
INSTALL_TEST_DEPS = "bash tools/install-test-deps.sh"


# Every `python -m cuda2hip` a test starts runs this checkout, not whatever copy is installed
# (an editable install of another clone or worktree would otherwise be what the tests test).
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


KINDS = ("unit", "rules", "integration")
# Fixtures that run a real tool: a test that takes one is an integration test.
TOOL_FIXTURES = frozenset({"hipcc", "nvcc", "process"})


def pytest_collection_modifyitems(items):
    """Every test gets a kind (unit unless marked otherwise or using a real tool), and every
    integration test is slow: `pytest -m "not slow"` is the fast tier."""
    for item in items:
        if TOOL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
        if item.get_closest_marker("integration") is not None:
            item.add_marker(pytest.mark.slow)
        if not any(item.get_closest_marker(kind) is not None for kind in KINDS):
            item.add_marker(pytest.mark.unit)


def not_installed(what: str, packages: str) -> str:
    """The reason a test skips when a system package it needs is missing: what, and how to get it."""
    return f"{what} not installed (apt-get install {packages}; every test tool at once: {INSTALL_TEST_DEPS})"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # Tests never share the user's rule cache (and never leave one behind).
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def run_cli(*args, cwd=None, input=None, env=None) -> subprocess.CompletedProcess:
    """Run `cuda2hip ARGS` in this process, through click's CliRunner: exit code, stdout and stderr
    as a user sees them, without the start of a process (run_process where a process is the point)."""
    from click.testing import CliRunner

    from cuda2hip.cli.commands import main

    runner = CliRunner()
    here = os.getcwd()
    with runner.isolation(input=input, env=env) as (out, err, _):
        if cwd is not None:
            os.chdir(cwd)
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                sys.stderr.write(f"{exc.code}\n")
        finally:
            os.chdir(here)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(list(args), code, stdout.decode("utf-8", "replace"),
                                       stderr.decode("utf-8", "replace"))


def run_process(*args, cwd=None, input=None, env=None) -> subprocess.CompletedProcess:
    """Run `python -m cuda2hip ARGS` as a real process: where the process itself is tested
    (signals, start-up, what a fresh interpreter reads, exit without tearing down)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "cuda2hip", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, env=full_env)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def process():
    """`cuda2hip` as a started process (run_process): for what only a process shows."""
    return run_process


class HipCompiler:
    """One ROCm release's HIP syntax check for an AMD GPU (gfx90a; semantics too, no GPU needed):
    `hipcc(path, *flags)` -> CompletedProcess. tests/harness/hip_toolchains.py says what each
    release is: 5.2 Debian 12's hipcc (with HIP_PLATFORM=amd: it picks the NVIDIA platform when
    nvcc is on PATH), 7.2 and 6.4 fetched by tests/harness/fetch_hip_toolchain.py."""

    def __init__(self, toolchain: hip_toolchains.Toolchain):
        self.toolchain = toolchain
        self.release = toolchain.release
        # -I flags for the ROCm library headers outside the release's own tree (5.2: Debian 13's)
        self.library_flags = [f"-I{d}" for d in toolchain.library_includes if os.path.isdir(d)]

    def __call__(self, path: Path, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.toolchain.command, "-w", *extra, str(path)], capture_output=True, text=True,
                              env=self.toolchain.env)


def hip_compiler(release: str) -> HipCompiler:
    """The release's compiler, or a skip that says why it is absent and how to get it."""
    toolchain = hip_toolchains.get(release)
    if toolchain is None:
        reason = hip_toolchains.why_missing(release)
        pytest.skip(reason if release == "5.2" else f"HIP {release}: {reason}")
    return HipCompiler(toolchain)


@pytest.fixture
def hipcc(request):
    """HIP 5.2 (the system hipcc), or each release in turn in a test marked @AT_EVERY_RELEASE (or
    parametrized with `hipcc` indirect, see release_params)."""
    return hip_compiler(getattr(request, "param", "5.2"))


# A test whose migrated output does not depend on the release runs at every release.
AT_EVERY_RELEASE = pytest.mark.parametrize("hipcc", hip_toolchains.RELEASES, indirect=True)


def release_params(cases, gaps: dict | None = None, releases=hip_toolchains.RELEASES) -> list:
    """(case, release) parameters for `@pytest.mark.parametrize("case,hipcc", ..., indirect=["hipcc"])`;
    `gaps[(case, release)]` names a rule gap (the construct) that makes its output fail there:
    a strict xfail, so that the fix shows as an XPASS to turn into a pass."""
    gaps = gaps or {}
    return [pytest.param(case, release, id=f"{case}-{release}",
                         marks=[pytest.mark.xfail(strict=True, reason=gaps[case, release])]
                         if (case, release) in gaps else [])
            for case in cases for release in releases]


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
