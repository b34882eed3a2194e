"""nvcc (is the input valid CUDA?) and a ROCm release's hipcc (does the migrated output build?),
with a result cache.

A compile result is cached under a key made of the command, the compiler's identity (a HIP
toolchain's changes with any of its packages) and the content of every file of the tree the unit
can include (found by scanning `#include` lines, transitively, over-approximating across `#if`
branches), so a re-run recompiles exactly the units whose inputs changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^">\r\n]+)[">]', re.M)
TIMEOUT = 900

# after a release's syntax-check command (tests/harness/hip_toolchains.py: `-x hip
# --offload-arch=gfx90a -fsyntax-only`)
HIP_FLAGS = ["-std=c++17", "-w", "-ferror-limit=20"]
NVCC_FLAGS = ["-cuda", "-o", os.devnull, "-x", "cu", "-std=c++17", "-w"]


@dataclass
class CompileResult:
    ok: bool
    output: str  # compiler messages (stderr + stdout), trimmed
    seconds: float = 0.0
    cached: bool = False


class DependencyScanner:
    """Local files a unit may include: its own folder first for quoted includes, then -I folders."""

    def __init__(self, tree: Path, include_dirs: list[Path]):
        self.tree = tree.resolve()
        self.include_dirs = [d.resolve() for d in include_dirs]
        self._includes: dict[Path, list[Path]] = {}

    def _direct(self, path: Path) -> list[Path]:
        if path not in self._includes:
            found = []
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            for match in INCLUDE.finditer(data):
                name = match.group(1).decode("utf-8", "replace")
                for folder in (path.parent, *self.include_dirs):
                    candidate = folder / name
                    if candidate.is_file():
                        found.append(candidate.resolve())
                        break
            self._includes[path] = found
        return self._includes[path]

    def closure(self, unit: Path) -> list[Path]:
        seen, todo = {unit.resolve()}, [unit.resolve()]
        while todo:
            for dep in self._direct(todo.pop()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return sorted(seen)


class CompileCache:
    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def key(self, command: list[str], files: list[Path], base: Path, identity: str = "") -> str:
        base = base.resolve()  # the dependency paths are resolved too
        digest = hashlib.sha256(json.dumps(command).encode())
        if identity:
            digest.update(b"\0toolchain\0" + identity.encode())
        for path in files:
            rel = os.path.relpath(path, base)
            digest.update(b"\0" + rel.encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()

    def get(self, key: str) -> CompileResult | None:
        path = self.folder / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return CompileResult(ok=data["ok"], output=data["output"], seconds=data["seconds"], cached=True)

    def put(self, key: str, result: CompileResult) -> None:
        path = self.folder / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"ok": result.ok, "output": result.output, "seconds": result.seconds}))
        tmp.replace(path)


def _trim(text: str, limit: int = 20000) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[... output cut ...]\n"


def run_compiler(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> CompileResult:
    import time

    start = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, errors="replace",
                              env=env, timeout=TIMEOUT)
        ok, output = proc.returncode == 0, proc.stderr + proc.stdout
    except subprocess.TimeoutExpired:
        ok, output = False, f"error: timed out after {TIMEOUT} s"
    return CompileResult(ok=ok, output=_trim(output), seconds=time.monotonic() - start)


def nvcc_command(includes: list[str], defines: list[str], extra: list[str], unit: str) -> list[str]:
    return ["nvcc", *NVCC_FLAGS, *extra, *[f"-I{i}" for i in includes], *[f"-D{d}" for d in defines], unit]


def hipcc_command(syntax_check: list[str], includes: list[str], defines: list[str], extra: list[str],
                  unit: str) -> list[str]:
    return [*syntax_check, *HIP_FLAGS, *extra, *[f"-I{i}" for i in includes], *[f"-D{d}" for d in defines], unit]
