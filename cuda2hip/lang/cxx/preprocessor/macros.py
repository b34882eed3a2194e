"""The one macro table: what each build of a migrated program defines, as far as it is known
without the project's build files. conditions.py evaluates `#if` tests against these builds.

The facts, each once:

- compiler identity: nvcc (and NVIDIA's other compilers) define NVCC_ONLY, never hip-clang; clang
  predefines `__HIP__` in every HIP compile (`hipcc -dM -E` of HIP 5.2 defines `__HIP__`,
  `__HIPCC__` and, in the device pass, `__HIP_DEVICE_COMPILE__`, none of nvcc's);
- the AMD platform: hipcc for AMD GPUs defines `__HIPCC__` and `__clang__`, hip/hip_common.h
  `__HIP_PLATFORM_AMD__` (and the deprecated `__HIP_PLATFORM_HCC__`); nothing defines
  `__CUDA_ARCH__`, `__CUDA_ARCH_LIST__` or the NVIDIA platform macros;
- the migration: `__CUDACC__` is renamed to `__HIPCC__` (HIP103), so it reads as defined;
- the target release: `HIP_VERSION_MAJOR` / `_MINOR` and `HIP_VERSION` (hip/hip_version.h:
  major * 10^7 + minor * 10^5 + patch; the patch level unknown, taken as 0);
- HIP switches: macros only a HIP build defines (HIP_PLATFORM, `__gfx*__`, a project's own
  `GGML_USE_HIP` / `USE_ROCM`: a word HIP, ROCM, AMD, ... of the name), never the HIP names the
  migration itself writes.

The builds: `HIP_CLANG` knows the compiler's identity alone (whether hip-clang ever compiles a
branch: "nvcc-only"); `amd(target)` all of the AMD build (which function definitions hipcc
compiles); `cuda(...)` nvcc's build of the CUDA code, where every HIP switch is undefined
("hip-only" branches). Everything else is unknown in every build.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ...lazy_regex import LazyRegex
from .conditions import UNDEFINED, UNKNOWN, Build, State, number

NVCC_ONLY = frozenset({"__NVCC__", "__NVCOMPILER", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__",
                       "__CUDACC_VER_BUILD__", "__CUDACC_RTC__", "__NVCC_DIAG_PRAGMA_SUPPORT__"})
HIP_CLANG_DEFINES = {"__HIP__": 1}
AMD_DEFINES = {"__HIPCC__": 1, "__clang__": 1, "__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1}
AMD_LACKS = frozenset({"__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})
RENAMED = {"__CUDACC__": "__HIPCC__"}
HIP_PLATFORM = frozenset({"__HIP__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_NVIDIA__",
                          "__HIP_PLATFORM_NVCC__", "__AMDGCN__", "__AMDGCN_WAVEFRONT_SIZE", "HIP_VERSION",
                          "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH"})
_GFX = LazyRegex(r"^__gfx[0-9a-f]+__$")
# a word of a project macro (split at `_`) that makes it a HIP switch: GGML_USE_HIP, USE_ROCM
_HIP_WORDS = frozenset({"HIP", "ROCM", "AMD", "HCC", "AMDGPU", "AMDGCN"})


def version_macros(target_rocm: str | None) -> dict[str, int]:
    """The version macros of hip/hip_version.h at a target release (none without a target)."""
    parts = [int(p) for p in (target_rocm or "").split(".")[:2] if p.isdigit()]
    if len(parts) != 2:
        return {}
    return {"HIP_VERSION_MAJOR": parts[0], "HIP_VERSION_MINOR": parts[1],
            "HIP_VERSION": parts[0] * 10_000_000 + parts[1] * 100_000}


def table(defined: dict[str, int], undefined: Iterable[str] = ()) -> Build:
    """A build that knows `defined` (name -> value) and `undefined`, nothing else."""
    lacks = frozenset(undefined)

    def state(name: str) -> State:
        got = defined.get(name)
        if got is not None:
            return (True, got)
        return UNDEFINED if name in lacks else UNKNOWN

    return state


HIP_CLANG: Build = table(HIP_CLANG_DEFINES, NVCC_ONLY)


def amd(target_rocm: str | None) -> Build:
    """hipcc building the migrated program for AMD GPUs at the target release."""
    defined = {**HIP_CLANG_DEFINES, **AMD_DEFINES, **version_macros(target_rocm)}
    defined.update({cuda: defined[hip] for cuda, hip in RENAMED.items()})
    return table(defined, NVCC_ONLY | AMD_LACKS)


def is_hip_switch(name: str, written_by_migration: Callable[[str], bool]) -> bool:
    """A macro only a HIP build defines: a HIP platform macro or a project's HIP switch (never a
    name the migration writes, `written_by_migration`)."""
    if name in HIP_PLATFORM or _GFX.match(name):
        return True
    if not any(word in _HIP_WORDS for word in name.split("_")):
        return False
    return not written_by_migration(name)


def cuda(written_by_migration: Callable[[str], bool]) -> Build:
    """nvcc building the CUDA code: every HIP switch undefined."""
    def state(name: str) -> State:
        return UNDEFINED if is_hip_switch(name, written_by_migration) else UNKNOWN

    return state


def with_cuda_arch(build: Build, arch: int | None) -> Build:
    """`build` with `__CUDA_ARCH__` defined as `arch` (None: undefined)."""
    def state(name: str) -> State:
        if name == "__CUDA_ARCH__":
            return UNDEFINED if arch is None else (True, arch)
        return build(name)

    return state


_COMMENT = LazyRegex(r"//.*|/\*.*?\*/")


def numeric_macros(root, data: bytes) -> dict[str, int]:
    """Object-like macros a file defines unconditionally (top level, or inside its include
    guard) as a plain number: `#define CUDART_HMASK 12000 // CUDA 12.0`."""
    out: dict[str, int] = {}
    children = [c for c in root.children if c.type != "comment"]
    scopes = [root]
    if len(children) == 1 and children[0].type == "preproc_ifdef":
        scopes.append(children[0])  # an include guard
    for scope in scopes:
        for c in scope.named_children:
            if c.type != "preproc_def":
                continue
            name = c.child_by_field_name("name")
            val = c.child_by_field_name("value")
            if name is None or val is None:
                continue
            text = _COMMENT.sub("", data[val.start_byte:val.end_byte].decode("utf-8", "replace")).strip()
            num = number(text)
            if num is not None:
                out.setdefault(data[name.start_byte:name.end_byte].decode("utf-8", "replace"), num)
    return out
