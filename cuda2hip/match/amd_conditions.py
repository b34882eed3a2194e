"""Whether hipcc compiles a preprocessor arm when it builds for AMD GPUs: True, False, or None
where the condition names macros the migrated program may define either way.

What hipcc for AMD is known to define: clang predefines `__HIP__` and `__HIPCC__` (and
`__clang__`); hip/hip_common.h defines `__HIP_PLATFORM_AMD__` (and the deprecated
`__HIP_PLATFORM_HCC__`); `__CUDACC__` is renamed to `__HIPCC__` by HIP103. It never defines
`__CUDA_ARCH__`, `__NVCC__` or the NVIDIA platform macros. `HIP_VERSION_MAJOR`/`_MINOR` and
`HIP_VERSION` (hip/hip_version.h: major * 10^7 + minor * 10^5 + patch) are the target release's
(`--target-rocm`), the patch level unknown (taken as 0 only where it cannot change the
result of a comparison against a round value).
"""

from __future__ import annotations

import re

from ..lazy_regex import LazyRegex

DEFINED = {"__HIP__": 1, "__HIPCC__": 1, "__clang__": 1, "__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1,
           "__CUDACC__": 1}
UNDEFINED = frozenset({"__CUDA_ARCH__", "__NVCC__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__",
                       "__CUDA_ARCH_LIST__"})
_TOKEN = LazyRegex(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|<=|>=|[()!<>]))")


# The -D macros the build gives the file being analysed (compile_commands.json), which decide
# its `#if` arms as they do in the build: set for each file by the runner (`use_build_defines`).
_BUILD: dict[str, int | None] = {}


def use_build_defines(defines) -> None:
    """The file about to be analysed is built with the macros `defines` ((name, value) pairs;
    value None: defined to something other than a number)."""
    global _BUILD
    _BUILD = dict(defines)


def build_define(name: str) -> tuple[bool, int | None] | None:
    """(True, value) where the build defines `name` for the file being analysed, else None."""
    if name in _BUILD:
        return True, _BUILD[name]
    return None


def known_macros(target_rocm: str) -> dict[str, int]:
    """The macros hipcc defines at the target release (`X.Y`)."""
    out = dict(DEFINED)
    major, minor = (int(p) for p in target_rocm.split(".")[:2])
    out.update(HIP_VERSION_MAJOR=major, HIP_VERSION_MINOR=minor, HIP_VERSION=major * 10_000_000 + minor * 100_000)
    return out


def evaluate(text: str, macros: dict[str, int]) -> bool | None:
    """The value of an `#if` condition on AMD, or None where it is not known."""
    tokens = []
    pos = 0
    text = re.sub(r"/\*.*?\*/|//.*", " ", text)
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                return None
            break
        tokens.append(m.group("num") or m.group("id") or m.group("op"))
        pos = m.end()
    parser = _Parser(tokens, {**_BUILD, **macros} if _BUILD else macros)
    try:
        value = parser.disjunction()
    except (IndexError, ValueError):
        return None
    if parser.i != len(tokens) or value is None:
        return None
    return bool(value)


class _Parser:
    """`||`, `&&`, `!`, comparisons, `defined`, numbers and names; None is unknown."""

    def __init__(self, tokens, macros):
        self.t, self.i, self.macros = tokens, 0, macros

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self):
        self.i += 1
        return self.t[self.i - 1]

    def disjunction(self):
        left = self.conjunction()
        while self.peek() == "||":
            self.take()
            right = self.conjunction()
            left = True if (left or right) else (None if left is None or right is None else False)
        return left

    def conjunction(self):
        left = self.comparison()
        while self.peek() == "&&":
            self.take()
            right = self.comparison()
            if left is False or right is False or left == 0 or right == 0:
                left = False
            elif left is None or right is None:
                left = None
            else:
                left = True
        return left

    def comparison(self):
        left = self.unary()
        while self.peek() in ("==", "!=", "<", ">", "<=", ">="):
            op = self.take()
            right = self.unary()
            if left is None or right is None:
                left = None
                continue
            a, b = int(left), int(right)
            left = {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        return left

    def unary(self):
        tok = self.take()
        if tok == "!":
            value = self.unary()
            return None if value is None else (not value)
        if tok == "(":
            value = self.disjunction()
            if self.take() != ")":
                raise ValueError("(")
            return value
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            name = self.take()
            if paren and self.take() != ")":
                raise ValueError("defined(")
            if name in self.macros:
                return True
            return False if name in UNDEFINED else None
        if tok[0].isdigit():
            return int(tok, 0)
        if tok in self.macros:
            return self.macros[tok]
        if tok in UNDEFINED:
            return 0  # an undefined name is 0 in #if
        return None
