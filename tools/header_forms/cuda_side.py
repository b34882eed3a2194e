"""What CUDA's own headers declare, as nvcc sees them: the preprocessing commands of nvcc's host and
device passes (taken from `nvcc --dryrun`, so every macro nvcc defines is there, `cuda_runtime.h`
force-included as nvcc does for every .cu file) on a file that also includes the half-precision
headers, then clang's parse of the preprocessed text (as CUDA, so `__device__` is an attribute it
knows). Declarations are attributed to the CUDA header they come from through the line markers.
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from .clang_decls import Declarations, line_markers, parse

NVCC = "nvcc"
HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h")  # besides the implicit cuda_runtime.h


def cuda_version(include: Path) -> str:
    m = re.search(r"#define CUDA_VERSION (\d+)", (include / "cuda.h").read_text())
    v = int(m.group(1))
    return f"{v // 1000}.{v % 1000 // 10}"


def newest_arch() -> str:
    archs = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
    return max(archs, key=lambda a: int(re.sub(r"\D", "", a)))


def _preprocess_commands(src: Path, arch: str) -> tuple[list[str], list[str]]:
    """(host, device) `gcc -E` commands of `nvcc --dryrun -c`."""
    dry = subprocess.run([NVCC, "--dryrun", "-std=c++17", f"-arch={arch.replace('compute', 'sm')}", "-c", str(src)],
                         capture_output=True, text=True, cwd=src.parent)
    host = device = None
    for line in dry.stderr.splitlines():
        if not line.startswith("#$ ") or " -E " not in line:
            continue
        cmd = shlex.split(line[3:])
        if "-D__CUDA_ARCH__" in line:
            device = device or cmd
        else:
            host = host or cmd
    if host is None or device is None:
        raise SystemExit(f"nvcc --dryrun shows no preprocessing step:\n{dry.stderr[-2000:]}")
    return host, device


def declarations() -> tuple[Path, Declarations, Declarations]:
    """(CUDA include directory, host side, device side declarations of its headers)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "decls.cu"
        src.write_text("".join(f"#include <{h}>\n" for h in HEADERS))
        out = []
        commands = _preprocess_commands(src, newest_arch())
        include = Path(os.path.realpath(next(a[2:] for a in commands[0] if a.startswith("-I"))))
        real = str(include) + "/"
        for cmd, side in zip(commands, ("host", "device")):
            ii = Path(tmp) / f"{side}.ii"
            cmd = [*cmd[:cmd.index("-o") if "-o" in cmd else len(cmd)], "-o", str(ii)]
            subprocess.run(cmd, check=True, cwd=tmp, capture_output=True)
            text = ii.read_text(errors="replace")
            marks = line_markers(text)
            starts = [m[0] for m in marks]

            def keep(_file: str, line: int, marks=marks, starts=starts) -> str | None:
                i = bisect.bisect_right(starts, line) - 1
                if i < 0:
                    return None
                at, _orig, name = marks[i]
                path = os.path.realpath(os.path.join(tmp, name))
                return path[len(real):] if path.startswith(real) else None

            args = ["-x", "cuda", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "-std=c++17", "-w", "-ferror-limit=0"]
            if side == "device":
                args.append("--cuda-device-only")
            out.append(parse(str(ii), args, keep))
    return include, out[0], out[1]
