"""Flag and word tokens of build files, with byte offsets into the file.

A CMake argument holds flags separated by blanks (quoted) or `;` (lists); a flag may sit in a
generator expression (`$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>`) or behind `SHELL:`. A
Makefile holds them in variable values and recipe lines, separated by blanks.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from .cmake_syntax import Argument

_CMAKE_ATOM = re.compile(r"[^\s;]+")
_MAKE_ATOM = re.compile(r"[^\s]+")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IMPORTED_TARGET = re.compile(r"(?<!\w)(?<!::)[A-Za-z_][\w.+-]*::[\w.+-]+")


class Token(NamedTuple):  # a tuple: build files hold tens of thousands of tokens
    start: int
    end: int
    text: str
    in_genex: bool = False


def cmake_tokens(arg: Argument) -> list[Token]:
    text = arg.text
    out = []
    for m in _CMAKE_ATOM.finditer(text):
        s, e = m.start(), m.end()
        genex = "$<" in text[:s] or text[s:e].startswith("$<")
        if text.startswith("$<", s):
            k = text.rfind(">:", s, e)
            k = k + 2 if k >= 0 else (text.find(":", s, e) + 1 or e)
            s = k
        if genex:
            while e > s and text[e - 1] == ">":
                e -= 1
        if text.startswith("SHELL:", s):
            s += len("SHELL:")
        if s < e:
            out.append(Token(arg.start + s, arg.start + e, text[s:e], genex))
    return out


@lru_cache(maxsize=64)  # the flag and the library rules read the same lines one after the other
def make_tokens(data: bytes, start: int, end: int) -> tuple[Token, ...]:
    raw = data[start:end]
    if raw.isascii():  # offsets into the text are offsets into the bytes
        return tuple(Token(start + m.start(), start + m.end(), m.group())
                     for m in _MAKE_ATOM.finditer(raw.decode("ascii")))
    text = raw.decode("utf-8", "replace")
    # offsets: the text may hold multi-byte characters, so count the bytes of each gap
    out = []
    at, done = start, 0  # byte offset of text[done:]
    for m in _MAKE_ATOM.finditer(text):
        at += len(text[done:m.start()].encode())
        size = len(m.group().encode())
        out.append(Token(at, at + size, m.group()))
        at, done = at + size, m.end()
    return tuple(out)


def removal_span(data: bytes, start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    """Span to delete so that removing [start, end) leaves no doubled blank (within [lo, hi));
    a line left blank goes entirely."""
    s, e = start, end
    while s > lo and data[s - 1:s] in (b" ", b"\t"):
        s -= 1
    if s == start or s == lo:
        while e < hi and data[e:e + 1] in (b" ", b"\t"):
            e += 1
    line_start = data.rfind(b"\n", 0, s) + 1
    line_end = data.find(b"\n", e)
    line_end = len(data) if line_end < 0 else line_end
    if not data[line_start:s].strip() and not data[e:line_end].strip() and line_end < len(data):
        return line_start, line_end + 1
    return s, e
