"""The compiler of each audited ROCm release, for the compile probes (probe_run.py).

In order: a command given for the release (`--compiler 7.2=CMD` or the environment variable
CUDA2HIP_HIPCC_7_2, a shell-quoted command line), the project's release toolchains
(tests/harness/hip_toolchains.py `command(release)`, when that module is there and has the
release), and for 5.2 Debian 12's hipcc (`HIP_PLATFORM=amd hipcc`) with the ROCm library headers
Debian 12 lacks (tests/harness/fetch_rocm_library_headers.sh).

Each command is a compiler invocation up to the flags; the probes add `-x hip -fsyntax-only
-std=c++17` and the source file.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY_HEADERS = ROOT / ".cache" / "rocm-library-headers" / "usr" / "include"
TOOLCHAINS = ROOT / "tests" / "harness" / "hip_toolchains.py"


@dataclass
class Compiler:
    release: str
    command: list[str]
    label: str  # where it comes from, for the facts and the docs
    env: dict = field(default_factory=dict)

    def version(self) -> str:
        """The compiler's first --version line (clang's, for the facts)."""
        proc = subprocess.run([*self.command, "--version"], capture_output=True, text=True,
                              env={**os.environ, **self.env})
        return (proc.stdout.splitlines() or ["?"])[0].strip()


def env_name(release: str) -> str:
    return "CUDA2HIP_HIPCC_" + release.replace(".", "_")


def _toolchains():
    if not TOOLCHAINS.is_file():
        return None
    spec = importlib.util.spec_from_file_location("hip_toolchains", TOOLCHAINS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def find(release: str, given: dict[str, str] | None = None) -> Compiler | None:
    text = (given or {}).get(release) or os.environ.get(env_name(release))
    if text:
        return Compiler(release, shlex.split(text), f"given: {text}")
    toolchains = _toolchains()
    if toolchains is not None:
        try:
            command = toolchains.command(release)
        except (KeyError, LookupError, ValueError, OSError):
            command = None
        if command:
            return Compiler(release, list(command), "tests/harness/hip_toolchains.py")
    if release == "5.2" and shutil.which("hipcc"):
        extra = ["-I", str(LIBRARY_HEADERS)] if LIBRARY_HEADERS.is_dir() else []
        return Compiler(release, ["hipcc", "--offload-arch=gfx90a", *extra],
                        "Debian 12 hipcc (HIP 5.2) with the ROCm library headers of Debian trixie",
                        env={"HIP_PLATFORM": "amd"})
    return None


def how_to_get(release: str) -> str:
    return (f"no compiler for ROCm {release}: give one with --compiler {release}=CMD or {env_name(release)}=CMD"
            + (" (or fetch the release toolchains: tests/harness/hip_toolchains.py)" if release != "5.2" else
               " (or apt-get install hipcc)"))
