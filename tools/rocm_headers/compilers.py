"""The compiler of each audited ROCm release, for the compile probes (probe_run.py).

In order: a command given for the release (`--compiler 7.2=CMD` or the environment variable
CUDA2HIP_HIPCC_7_2, a shell-quoted command line), else the project's release toolchains
(tests/harness/hip_toolchains.py: 7.2 and 6.4 prepared by tests/harness/fetch_hip_toolchain.py,
5.2 Debian 12's hipcc with the ROCm library headers Debian 12 lacks).

Each command is a compiler invocation up to the flags; the probes add `-x hip -fsyntax-only
-std=c++17` and the source file.
"""

from __future__ import annotations

import os
import shlex
import sys
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    if str(TOOLCHAINS.parent) not in sys.path:
        sys.path.insert(0, str(TOOLCHAINS.parent))
    import hip_toolchains

    return hip_toolchains


def find(release: str, given: dict[str, str] | None = None) -> Compiler | None:
    text = (given or {}).get(release) or os.environ.get(env_name(release))
    if text:
        given_one = Compiler(release, shlex.split(text), "")
        given_one.label = f"{given_one.version()} (given: {text})"
        return given_one
    toolchains = _toolchains()
    found = toolchains.get(release) if toolchains is not None and release in toolchains.RELEASES else None
    if found is None:
        return None
    label = f"HIP {found.rocm_version}, clang {found.clang_version}"
    if release == "5.2":
        label = f"Debian 12 hipcc: {label}; the libraries' headers of Debian trixie"
    else:
        label = f"Debian's packages: {label} (tests/harness/fetch_hip_toolchain.py)"
    includes = [f"-I{p}" for p in found.library_includes]
    return Compiler(release, [*found.command, *includes], label, env=dict(found.environment))


def how_to_get(release: str) -> str:
    toolchains = _toolchains()
    why = toolchains.why_missing(release) if toolchains is not None and release in toolchains.RELEASES else ""
    return (f"no compiler for ROCm {release}: {why or 'no toolchain'}; or give one with --compiler {release}=CMD "
            f"or {env_name(release)}=CMD")
