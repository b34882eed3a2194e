"""What the resident server's tests share: an environment whose calls use a server of the test's
own, the CLI as a subprocess, the server's status, and small and big trees to check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float* p) { p[threadIdx.x] = 0; __syncthreads(); }\n"
          "void f(float* p) {\n  cudaMalloc(&p, 4);\n  k<<<1, 1>>>(p);\n  cudaMemcpy(p, p, 4, cudaMemcpyDeviceToDevice);\n}\n")


def run_cuda2hip(args, env, cwd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cuda2hip", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, **kw)


@pytest.fixture
def server_env(tmp_path):
    """An environment whose `cuda2hip` calls use a server (sockets in a private folder of the
    test's own); whatever server the test started is stopped afterwards."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k != "CUDA2HIP_NO_SERVER"}
    env["CUDA2HIP_RUNTIME_DIR"] = str(runtime)
    yield env
    run_cuda2hip(["server", "stop"], env, tmp_path)
    for log in runtime.glob("*.log"):
        for line in log.read_text().splitlines():
            if line.endswith(")") and "starting (pid " in line:
                pid = int(line.split("starting (pid ")[1].split(",")[0])
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def server_status(env, cwd) -> str | None:
    r = run_cuda2hip(["server", "status"], env, cwd)
    return r.stdout if r.returncode == 0 else None


def checks_served(env, cwd) -> int:
    out = server_status(env, cwd)
    assert out is not None
    return int(out.split(" checks served")[0].rsplit(" ", 1)[1])


def wait_until(predicate, seconds=60.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.cu").write_text(KERNEL)
    (project / "src" / "b.cu").write_text(KERNEL.replace("cudaMalloc(&p, 4);", "cudaMallocHost(&p, 4);"))
    # a configuration the server never saw: found from the working directory, as in any run
    (project / "cuda2hip.toml").write_text('ignore = ["HIP100"]\n')
    return project


def make_big_tree(root: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import generate
    finally:
        sys.path.pop(0)
    generate(root, 60_000)
    return root


def socket_path_of(env: dict) -> str:
    """The socket a server of this code has in `env`, as a `cuda2hip` command started in `env`
    computes it (the import path of a test's own process is not a command's)."""
    code = "from cuda2hip.resident import code_key, socket_path; print(socket_path(code_key()))"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return r.stdout.strip()
