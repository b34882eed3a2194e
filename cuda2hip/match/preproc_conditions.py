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
macros) cannot be told.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

import tree_sitter as ts

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
    if name in NVCC_ONLY:
        return (False, None)
    if name == "__HIP__":
        return (True, 1)
    return None  # a project's HIP switch may or may not be set for the migrated code


def cuda_build(name: str):
    return (False, None) if is_hip_switch(name) else None


def with_cuda_arch(env: Env, arch: int | None) -> Env:
    """`env` with `__CUDA_ARCH__` defined as `arch` (None: undefined)."""
    def look(name: str):
        if name == "__CUDA_ARCH__":
            return (False, None) if arch is None else (True, arch)
        return env(name)
    return look


# ------------------------------------------------------------------ evaluation

_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uUlL]*$")
_BINARY = {
    "*": lambda a, b: a * b, "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None, "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b), "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
}


def _text(node: ts.Node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def value(node: ts.Node | None, data: bytes, env: Env) -> int | None:
    """The integer value of a preprocessor expression in `env`; None where it cannot be told."""
    if node is None:
        return None
    kind = node.type
    if kind == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return value(inner[0], data, env) if len(inner) == 1 else None
    if kind == "number_literal":
        m = _INT.match(_text(node, data))
        if m is None:
            return None
        digits = m.group(1)
        return int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 8 if digits[0] == "0" else 10)
    if kind == "identifier":
        got = env(_text(node, data))
        if got is None:
            return None
        defined, val = got
        return val if defined else 0  # an undefined name is 0 in #if
    if kind == "preproc_defined":
        names = [c for c in node.named_children if c.type == "identifier"]
        got = env(_text(names[0], data)) if names else None
        return None if got is None else int(got[0])
    if kind == "unary_expression":
        op = _text(node.child_by_field_name("operator"), data)
        v = value(node.child_by_field_name("argument"), data, env)
        if v is None:
            return None
        return {"!": int(not v), "-": -v, "+": v, "~": ~v}.get(op)
    if kind == "binary_expression":
        op = _text(node.child_by_field_name("operator"), data)
        left = value(node.child_by_field_name("left"), data, env)
        if op in ("&&", "||"):
            if left is not None and bool(left) == (op == "||"):
                return int(op == "||")  # decided by the left side
            right = value(node.child_by_field_name("right"), data, env)
            if right is not None and bool(right) == (op == "||"):
                return int(op == "||")
            return None if left is None or right is None else int(op == "&&")  # neither side decided
        right = value(node.child_by_field_name("right"), data, env)
        fn = _BINARY.get(op)
        return None if left is None or right is None or fn is None else fn(left, right)
    return None  # function-like macros, __has_include, character literals (and `?:`, which the
    # grammar does not parse in #if) ...


def truth(node: ts.Node | None, data: bytes, env: Env) -> Tri:
    v = value(node, data, env)
    return None if v is None else bool(v)


# ------------------------------------------------------------------ the branches around a place

_BRANCHES = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})


def _branch_test(node: ts.Node, data: bytes, env: Env) -> Tri:
    """The condition of an #if / #elif / #ifdef / #ifndef / #elifdef node."""
    if node.type in ("preproc_ifdef", "preproc_elifdef"):
        name = node.child_by_field_name("name")
        got = env(_text(name, data)) if name is not None else None
        if got is None:
            return None
        negated = node.children[0].type in ("#ifndef", "#elifndef")
        return got[0] != negated
    return truth(node.child_by_field_name("condition"), data, env)


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
