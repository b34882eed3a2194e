"""Preprocessor conditions: which branches a HIP build of the migrated code compiles.

A condition is evaluated with three values (True, False, None = cannot tell) in two builds:

- *hip-clang*: the compiler-identity macros only nvcc defines (`__NVCC__`, `__CUDACC_VER_MAJOR__`,
  ...) are undefined and clang's `__HIP__` is defined (checked with HIP 5.2's hipcc: `hipcc -dM
  -E` defines `__HIP__`, `__HIPCC__` and, in the device pass, `__HIP_DEVICE_COMPILE__`, none of
  the nvcc ones); a project's own HIP switches may or may not be set for the migrated code;
- *CUDA*: the HIP platform macros (`__HIP_PLATFORM_AMD__`, `__HIP__`, `HIP_VERSION`, ...) and the
  project's HIP switches (`GGML_USE_HIP`, `USE_ROCM`, `AMD_MFMA_AVAILABLE`) are undefined.

A branch that is False in one of them is not CUDA code the migration turns into HIP: either
hip-clang never compiles it ("nvcc-only": `#if defined(__NVCC__)`), or the project wrote it for
HIP itself ("hip-only": `#ifdef __HIP_PLATFORM_AMD__`). A rule lists in `skip_branches` where it
stays quiet. Names the
migration itself writes (`__HIPCC__` for `__CUDACC__`, `__HIP_DEVICE_COMPILE__` for
`__CUDA_ARCH__` presence tests, every HIP name of the rename tables) are never taken for a HIP
switch, so the migrated code keeps its findings. Everything else (`__CUDA_ARCH__`, project
macros) cannot be told. The expressions are evaluated by pp_condition.py.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

import tree_sitter as ts

from . import pp_condition
from .amd_conditions import build_define

# Defined by nvcc (or NVIDIA's other compilers), never by hip-clang.
NVCC_ONLY = frozenset({"__NVCC__", "__NVCOMPILER", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__",
                       "__CUDACC_VER_BUILD__", "__CUDACC_RTC__", "__NVCC_DIAG_PRAGMA_SUPPORT__"})
# Defined in a HIP build only (clang, the HIP headers, hipcc's version macros).
HIP_PLATFORM = frozenset({"__HIP__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_NVIDIA__",
                          "__HIP_PLATFORM_NVCC__", "__AMDGCN__", "__AMDGCN_WAVEFRONT_SIZE", "HIP_VERSION",
                          "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH"})
_GFX = re.compile(r"^__gfx[0-9a-f]+__$")
# a word of a project macro (split at `_`) that makes it a HIP switch: GGML_USE_HIP, USE_ROCM
_HIP_WORDS = frozenset({"HIP", "ROCM", "AMD", "HCC", "AMDGPU", "AMDGCN"})

Tri = bool | None
Env = Callable[[str], "tuple[bool, int | None] | None"]  # name -> (defined, value) or None: unknown


@lru_cache(maxsize=None)
def _migration_names() -> frozenset[str]:
    """The HIP names the rename tables write, plus what HIP504's fix writes."""
    from .api_tables import all_table_paths, hip_names

    names = {"__HIP_DEVICE_COMPILE__"}
    for path in all_table_paths():
        try:
            names.update(hip_names(path))
        except (KeyError, ValueError, TypeError, OSError):
            continue  # not a name table
    return frozenset(names)


def is_hip_switch(name: str) -> bool:
    """A macro only a HIP build defines: a HIP platform macro or a project's HIP switch."""
    if name in HIP_PLATFORM or _GFX.match(name):
        return True
    if not any(word in _HIP_WORDS for word in name.split("_")):
        return False
    return name not in _migration_names()


def hip_clang(name: str):
    if name not in NVCC_ONLY and (given := build_define(name)) is not None:
        return given  # the build's -D, which the migrated build keeps
    if name in NVCC_ONLY:
        return (False, None)
    if name == "__HIP__":
        return (True, 1)
    return None  # a project's HIP switch may or may not be set for the migrated code


def cuda_build(name: str):
    if (given := build_define(name)) is not None:
        return given
    return (False, None) if is_hip_switch(name) else None


def with_cuda_arch(env: Env, arch: int | None) -> Env:
    """`env` with `__CUDA_ARCH__` defined as `arch` (None: undefined)."""
    def look(name: str):
        if name == "__CUDA_ARCH__":
            return (False, None) if arch is None else (True, arch)
        return env(name)
    return look


# ------------------------------------------------------------------ evaluation (pp_condition's)

def _lookups(env: Env):
    """`env` as pp_condition's value and defined lookups (an undefined name is 0 in #if)."""
    def value(name: str) -> int | None:
        got = env(name)
        return None if got is None else (got[1] if got[0] else 0)

    def defined(name: str) -> bool | None:
        got = env(name)
        return None if got is None else got[0]
    return value, defined


def truth(node: ts.Node | None, data: bytes, env: Env) -> Tri:
    """Whether the #if expression `node` holds in `env` (None: cannot tell)."""
    v = None if node is None else pp_condition.evaluate(node, data, *_lookups(env))
    return None if v is None else v != 0


# ------------------------------------------------------------------ the branches around a place

_BRANCHES = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})


def _branch_test(node: ts.Node, data: bytes, env: Env) -> Tri:
    """The test of an #if / #elif / #ifdef / #ifndef / #elifdef node."""
    return pp_condition.truth(node, data, *_lookups(env))


def _contains(node: ts.Node | None, pos: int) -> bool:
    return node is not None and node.start_byte <= pos < node.end_byte


def branch_tests(tree: ts.Tree, pos: int) -> list[tuple[ts.Node, bool]]:
    """The conditions a preprocessor must meet to compile the byte at `pos`: (branch node, wanted
    truth), outermost last. A place in the condition of a branch itself is not under it."""
    out: list[tuple[ts.Node, bool]] = []
    node = tree.root_node.descendant_for_byte_range(pos, pos)
    cur = node
    while cur is not None:
        if cur.type in _BRANCHES:
            alternative = cur.child_by_field_name("alternative")
            test = cur.child_by_field_name("condition") or cur.child_by_field_name("name")
            if _contains(alternative, pos):
                out.append((cur, False))
            elif test is not None and pos >= test.end_byte:
                out.append((cur, True))
        cur = cur.parent
    return out


def compiled(tree: ts.Tree, data: bytes, pos: int, env: Env) -> Tri:
    """Whether a build described by `env` compiles the byte at `pos`."""
    result: Tri = True
    for node, wanted in branch_tests(tree, pos):
        got = _branch_test(node, data, env)
        if got is None:
            result = None
        elif got != wanted:
            return False
    return result


def branch_kinds(tree: ts.Tree, data: bytes, pos: int) -> frozenset[str]:
    """"nvcc-only" if hip-clang never compiles the byte at `pos`, "hip-only" if only a HIP build does."""
    if b"#" not in data:
        return frozenset()
    kinds = set()
    if compiled(tree, data, pos, hip_clang) is False:
        kinds.add("nvcc-only")
    if compiled(tree, data, pos, cuda_build) is False:
        kinds.add("hip-only")
    return frozenset(kinds)
