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

import bisect
import re
from functools import lru_cache

from msgspec import Struct

from ...lazy_regex import LazyRegex
from .conditions import clean, parse

_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*([A-Za-z_]\w*)?(.*)", re.S)
_INCLUDE_PATH = re.compile(rb'[ \t]*([<"])([^>"\n]+)[>"]')
_IDENT = LazyRegex(rb"[A-Za-z_]\w*")
# What the scanner stops at (the regex engine skips everything else, fast: every branch starts
# with a literal): a directive line, comments, string / character / raw string literals,
# `extern "C" {` and braces.
_TOKEN = re.compile(rb'\n[ \t]*#|//|/\*|R"|"|\'|extern|\{|\}')
# the same where no `extern "C"` can open a block: braces do not matter then
_TOKEN_NO_EXTERN = LazyRegex(rb'\n[ \t]*#|//|/\*|R"|"|\'')
_FIRST_DIRECTIVE = re.compile(rb"[ \t]*#")
_EXTERN_C = re.compile(rb'extern\s*"C(?:\+\+)?"\s*\{')
_WORD_CHAR = LazyRegex(rb"\w")
_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)


class Include(Struct, frozen=True):
    header: str
    quoted: bool
    start: int  # start of the directive's line
    end: int  # just after its line (newline included)
    depth: int  # open conditionals around it (the include guard not counted)
    anchor: int  # start of the outermost unconditional construct holding it (itself when top level)
    extern_c: int | None  # start of the `extern "C"` construct it is inside, if any


class Layout(Struct, frozen=True):
    includes: tuple[Include, ...]
    # (start of the body, start of the next #elif/#else/#endif) of each conditional branch (the
    # include guard is none), ordered by start
    branches: tuple[tuple[int, int], ...] = ()

    def branches_at(self, pos: int) -> list[tuple[int, int]]:
        """The conditional branches whose bodies hold `pos`, innermost first."""
        k = bisect.bisect_right(self.branches, (pos, 1 << 62))
        return sorted((b for b in self.branches[:k] if b[1] > pos), key=lambda b: -b[0])


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
        self.seen_code = False  # code before the first directive (then it opens no include guard)
        self.directives = 0  # directives read so far
        self.pragma_once_first = False
        self.pending_guard: bytes | None = None  # name of a leading #ifndef awaiting its #define
        self.branches: list[tuple[int, int]] = []
        self.open_branches: list[int | None] = []  # body start of the open branch of each cond

    def run(self) -> Layout:
        data, n = self.data, len(self.data)
        pos = self._directive_at(0) if _FIRST_DIRECTIVE.match(data) else 0
        search = (_TOKEN if b"extern" in data else _TOKEN_NO_EXTERN).search
        while pos < n:
            m = search(data, pos)
            if m is None:
                break
            start = m.start()
            tok = data[start]
            if tok == 0x0A:  # a directive line
                pos = self._directive_at(start + 1)
            elif tok == 0x2F:
                pos = _line_end(data, start) if data[start + 1] == 0x2F else _comment_end(data, start)
            elif tok == 0x52:  # R"
                pos = _raw_string_end(data, start) if _raw_prefix(data, start) else _string_end(data, start + 1)
            elif tok == 0x22:
                pos = _string_end(data, start)
            elif tok == 0x27:
                digits = start and data[start - 1:start].isalnum() and data[start + 1:start + 2].isalnum() \
                    and data[start - 1:start] not in (b"u", b"U", b"L", b"8")
                pos = start + 1 if digits else _string_end(data, start)  # 1'000 or a character literal
            elif tok == 0x65:  # extern
                ext = _EXTERN_C.match(data, start)
                if ext is not None and not (start and _WORD_CHAR.match(data, start - 1)):
                    self.braces += 1
                    self.externs.append((self.braces, self._anchor(_line_start(data, start))))
                    pos = ext.end()
                else:
                    pos = m.end()
            elif tok == 0x7B:
                self.braces += 1
                pos = start + 1
            else:  # }
                if self.externs and self.externs[-1][0] == self.braces:
                    self.externs.pop()
                self.braces = max(0, self.braces - 1)
                pos = start + 1
        return Layout(tuple(self.includes), tuple(sorted(self.branches)))

    def _directive_at(self, start: int) -> int:
        if not self.directives:
            self.seen_code = bool(_COMMENTS.sub(b"", self.data[:start]).strip())
        end = self._directive(start)
        self.directives += 1
        # leave the newline to the scanner: the next line may be a directive
        return end - 1 if self.data[end - 1:end] == b"\n" else end

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
            # an include guard opens the file, or follows its `#pragma once`
            if not self.seen_code and (self.directives == 0 or (self.directives == 1 and self.pragma_once_first)):
                self.pending_guard = _guard_name(name, rest)
            self.conds.append(i)
            self.open_branches.append(end)
        elif name in (b"elif", b"else", b"elifdef", b"elifndef"):
            if self.open_branches:
                if self.open_branches[-1] is not None:
                    self.branches.append((self.open_branches[-1], i))
                self.open_branches[-1] = end
        elif name == b"pragma" and self.directives == 0:
            self.pragma_once_first = rest.split()[:1] == [b"once"]
        elif name == b"endif":
            if self.open_branches:
                body = self.open_branches.pop()
                if body is not None:
                    self.branches.append((body, i))
            if self.conds:
                if self.guard_cond == len(self.conds) - 1:
                    self.guard_cond = None
                self.conds.pop()
        elif name == b"define" and pending is not None:
            d = _IDENT.search(rest)
            if d is not None and d.group() == pending:
                self.guard_cond = 0
                self.open_branches[0] = None  # the include guard is no branch
        elif name == b"include":
            p = _INCLUDE_PATH.match(rest)
            if p is not None:
                depth = len(self.conds) - (1 if self.guard_cond is not None else 0)
                extern = self.externs[-1][1] if self.externs else None
                anchor = self._anchor(i) if extern is None else min(self._anchor(i), extern)
                self.includes.append(Include(p.group(2).decode("utf-8", "replace"), p.group(1) == b'"',
                                             i, end, depth, anchor, extern))
        return end


def _guard_name(name: bytes, rest: bytes) -> bytes | None:
    """The macro an include guard's opening directive tests: `#ifndef X`, `#if !defined(X)`."""
    test = clean(rest.decode("utf-8", "replace")).strip()
    if name == b"ifndef":
        test = f"!defined({test})"
    elif name != b"if":
        return None
    expr = parse(test)
    if expr is None or expr.op != "u!" or expr.args[0].op != "defined":
        return None
    return expr.args[0].args[0].encode()


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


def _raw_prefix(data: bytes, i: int) -> bool:
    """Whether the `R"` at `i` opens a raw string literal (R, u8R, uR, UR, LR; not `fooR"`)."""
    j = i
    while j > 0 and data[j - 1:j] in (b"u", b"U", b"L", b"8") and i - j < 2:
        j -= 1
    return not (j and _WORD_CHAR.match(data, j - 1))


def _raw_string_end(data: bytes, i: int) -> int:
    """End of `R"delim( ... )delim"` (the delimiter is at most 16 characters)."""
    open_paren = data.find(b"(", i + 2, i + 19)
    if open_paren < 0:
        return i + 2
    closing = b")" + data[i + 2:open_paren] + b'"'
    close = data.find(closing, open_paren)
    return len(data) if close < 0 else close + len(closing)


def _string_end(data: bytes, i: int) -> int:
    """End of the string or character literal whose quote is at `i` (an unterminated one ends
    at its line end)."""
    quote = data[i]
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

