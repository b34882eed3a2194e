"""Where a file's `#include` lines sit: inside which conditionals and `extern "C"` blocks.

The tree-sitter tree cannot tell this reliably: the common C-header idiom

    #ifdef __cplusplus
    extern "C" {
    #endif

opens a block inside a conditional and closes it in another, which the parser recovers from in
ways that put the following lines anywhere. A small lexer over the text (comments, string and
character literals skipped; directive lines read whole, with continuations) counts conditionals
and braces instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*([A-Za-z_]\w*)?(.*)", re.S)
_INCLUDE_PATH = re.compile(rb'[ \t]*([<"])([^>"\n]+)[>"]')
_EXTERN_C = re.compile(rb'extern\s*"C(?:\+\+)?"\s*\{')
_IDENT = re.compile(rb"[A-Za-z_]\w*")
# `#ifndef X` or `#if !defined(X)` (name + rest of the directive line)
_GUARD_IF = re.compile(rb"(?:ifndef\s+([A-Za-z_]\w*)|if\s*!\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?)\s*(?://[^\n]*)?$")


@dataclass(frozen=True, slots=True)
class Include:
    header: str
    quoted: bool
    start: int  # start of the directive's line
    end: int  # just after its line (newline included)
    depth: int  # open conditionals around it (the include guard not counted)
    anchor: int  # start of the outermost unconditional construct holding it (itself when top level)
    extern_c: int | None  # start of the `extern "C"` construct it is inside, if any


@dataclass(frozen=True, slots=True)
class Layout:
    includes: tuple[Include, ...]


@lru_cache(maxsize=64)
def scan(data: bytes) -> Layout:
    return _Scanner(data).run()


class _Scanner:
    def __init__(self, data: bytes):
        self.data = data
        self.conds: list[int] = []  # start offsets of the open #if/#ifdef/#ifndef lines
        self.guard_cond: int | None = None  # index in conds of the include guard's #ifndef
        self.braces = 0
        self.externs: list[tuple[int, int]] = []  # (brace depth inside, anchor) of open extern "C" blocks
        self.includes: list[Include] = []
        self.seen_code = False
        self.pending_guard: bytes | None = None  # name of a leading #ifndef awaiting its #define

    def run(self) -> Layout:
        data, n, i = self.data, len(self.data), 0
        line_start = True
        while i < n:
            c = data[i]
            if line_start:
                j = i
                while j < n and data[j] in b" \t":
                    j += 1
                if j < n and data[j] == 0x23:  # '#'
                    i = self._directive(i)
                    continue
                line_start = False
            if c == 0x0A:
                line_start = True
                i += 1
            elif c == 0x2F and data.startswith(b"//", i):
                i = _line_end(data, i)
            elif c == 0x2F and data.startswith(b"/*", i):
                i = _comment_end(data, i)
            elif c == 0x22 or (c == 0x27 and not (i and _is_word(data[i - 1]))):  # " or ' (not 1'000)
                self.seen_code = True
                i = self._literal(i)
            elif c == 0x52 and data.startswith(b'R"', i) and not (i and _is_word(data[i - 1]) and
                                                                 data[i - 1:i] not in (b"u", b"U", b"L", b"8")):
                self.seen_code = True
                i = _raw_string_end(data, i)
            elif c == 0x65 and data.startswith(b"extern", i) and not (i and _is_word(data[i - 1])):
                self.seen_code = True
                m = _EXTERN_C.match(data, i)
                if m:
                    self.braces += 1
                    self.externs.append((self.braces, self._anchor(_line_start(data, i))))
                    i = m.end()
                else:
                    i += 6
            elif c == 0x7B:  # {
                self.seen_code = True
                self.braces += 1
                i += 1
            elif c == 0x7D:  # }
                if self.externs and self.externs[-1][0] == self.braces:
                    self.externs.pop()
                self.braces = max(0, self.braces - 1)
                i += 1
            else:
                if c not in b" \t\r\f\v":
                    self.seen_code = True
                i += 1
        return Layout(tuple(self.includes))

    def _anchor(self, pos: int) -> int:
        """Start of the outermost open conditional (the guard excepted), else `pos`."""
        for k, start in enumerate(self.conds):
            if k != self.guard_cond:
                return start
        return pos

    def _directive(self, i: int) -> int:
        data = self.data
        end = _directive_end(data, i)
        m = _DIRECTIVE.match(data, i, end)
        name, rest = m.group(1) or b"", m.group(2)
        pending, self.pending_guard = self.pending_guard, None
        if name in (b"if", b"ifdef", b"ifndef"):
            if not self.seen_code and not self.conds and not self.includes:
                g = _GUARD_IF.match(name + rest)
                self.pending_guard = (g.group(1) or g.group(2)) if g else None
            self.conds.append(i)
        elif name == b"endif":
            if self.conds:
                if self.guard_cond == len(self.conds) - 1:
                    self.guard_cond = None
                self.conds.pop()
        elif name == b"define" and pending is not None:
            d = _IDENT.search(rest)
            if d is not None and d.group() == pending:
                self.guard_cond = 0
        elif name == b"include":
            p = _INCLUDE_PATH.match(rest)
            if p is not None:
                depth = len(self.conds) - (1 if self.guard_cond is not None else 0)
                extern = self.externs[-1][1] if self.externs else None
                anchor = self._anchor(i) if extern is None else min(self._anchor(i), extern)
                self.includes.append(Include(p.group(2).decode("utf-8", "replace"), p.group(1) == b'"',
                                             i, end, depth, anchor, extern))
        return end

    def _literal(self, i: int) -> int:
        return _string_end(self.data, i, self.data[i])


def _is_word(c: int) -> bool:
    return c == 0x5F or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


def _line_start(data: bytes, pos: int) -> int:
    return data.rfind(b"\n", 0, pos) + 1


def _line_end(data: bytes, i: int) -> int:
    """End of a `//` comment: the newline (not consumed), continuations included."""
    n = len(data)
    while True:
        nl = data.find(b"\n", i)
        if nl < 0:
            return n
        if data[nl - 1:nl] == b"\\" or data[nl - 2:nl] == b"\\\r":
            i = nl + 1
            continue
        return nl


def _comment_end(data: bytes, i: int) -> int:
    close = data.find(b"*/", i + 2)
    return len(data) if close < 0 else close + 2


def _directive_end(data: bytes, i: int) -> int:
    """Just after the directive's last line: continuations and block comments spanning lines
    belong to it."""
    n = len(data)
    j = i
    while j < n:
        c = data[j]
        if c == 0x0A:
            if data[j - 1:j] == b"\\" or data[j - 2:j] == b"\\\r":
                j += 1
                continue
            return j + 1
        if c == 0x2F and data.startswith(b"/*", j):
            j = _comment_end(data, j)
            continue
        if c == 0x2F and data.startswith(b"//", j):
            j = _line_end(data, j)
            continue
        j += 1
    return n


def _raw_string_end(data: bytes, i: int) -> int:
    """End of `R"delim( ... )delim"` (the delimiter is at most 16 characters)."""
    open_paren = data.find(b"(", i + 2, i + 19)
    if open_paren < 0:
        return i + 2
    closing = b")" + data[i + 2:open_paren] + b'"'
    close = data.find(closing, open_paren)
    return len(data) if close < 0 else close + len(closing)


def _string_end(data: bytes, i: int, quote: int) -> int:
    n = len(data)
    j = i + 1
    while j < n:
        c = data[j]
        if c == 0x5C:
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == 0x0A:
            return j  # unterminated: stop at the line end
        j += 1
    return n

