"""What a HIP release declares for HIP code: its headers parsed by clang as HIP for the AMD platform
(`-x hip --offload-arch=gfx90a`, after the clang wrapper hipcc force-includes), host and device
side, with the clang headers of the hipcc that release ships with (from ROCm 6 on, most device math
functions are declared by clang's `__clang_hip_math.h`, not by HIP's own headers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .clang_decls import Declarations, parse

HEADERS = ("hip/hip_runtime.h", "hip/hip_fp16.h", "hip/hip_bf16.h", "hip/hip_cooperative_groups.h")
# Documented opt-in switches whose declarations count as "declared with -DNAME".
OPTIONS = ("HIP_ENABLE_WARP_SYNC_BUILTINS", "OCML_BASIC_ROUNDED_OPERATIONS")


@dataclass(frozen=True)
class Release:
    rocm: str  # major.minor of the HIP headers
    label: str  # where they come from, for the data's sources
    include: Path  # usr/include of the HIP headers
    clang: str  # clang major version of the release's hipcc
    resource_include: Path  # that clang's include directory

    def sources(self) -> str:
        return self.label


def _keep(release: Release):
    inc = os.path.realpath(release.include) + "/"
    res = os.path.realpath(release.resource_include) + "/"

    def keep(path: str, _line: int) -> str | None:
        real = os.path.realpath(path)
        if real.startswith(res):
            return f"clang {release.clang} {real[len(res):]}"
        if real.startswith(inc):
            rel = real[len(inc):]
            return rel if rel.startswith("hip/") else None
        return None

    return keep


def declarations(release: Release, device: bool, defines: tuple[str, ...] = ()) -> Declarations:
    headers = [h for h in HEADERS if (release.include / h).is_file()]
    source = "".join(f"#include <{h}>\n" for h in headers)
    args = ["-x", "hip", "--offload-arch=gfx90a", "-nogpuinc", "-nogpulib", "-std=c++17", "-w", "-ferror-limit=0",
            "-include", "__clang_hip_runtime_wrapper.h",
            "-resource-dir", str(release.resource_include.parent), *(f"-D{d}" for d in defines)]
    if os.path.realpath(release.include) != "/usr/include":  # (a system directory already)
        args += ["-isystem", str(release.include)]
    if device:
        args.append("--cuda-device-only")
    return parse("decls.hip", args, _keep(release), unsaved=[("decls.hip", source)])
