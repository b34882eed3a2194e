"""Python string literals as text with an exact map back to the source bytes.

An embedded CUDA source is analysed as the literal's *value* (escapes decoded, `\\r\\n` read as
`\\n`, as Python reads it); findings and edits come back as value offsets. `TextMap` turns them
into file offsets: verbatim stretches map byte for byte, while an escape sequence (or an f-string
field) is a unit that maps as a whole and that no edit may split. `encode_for` writes edit text
in the literal's own syntax (escaping what the literal kind needs), or says it cannot.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = {"x": 2, "u": 4, "U": 8}
# Stand-in for a computed part (f-string field, str.format field, non-literal operand): an
# identifier, so the C++ around it still parses, with blanks so it never joins a neighbour.
PLACEHOLDER = " _c2h_ "


@dataclass
class Segment:
    vstart: int  # value bytes [vstart, vend)
    vend: int
    sstart: int  # file bytes [sstart, send)
    send: int
    exact: bool  # verbatim (byte for byte) or a unit (escape, field) that maps as a whole


class TextMap:
    """Value text of one or more literal pieces and where each value byte comes from. Built
    piece by piece (a verbatim run is one piece) and looked up by bisection: linear in the
    literal's size however many findings map through it (a 5 MB kernel string took minutes)."""

    def __init__(self):
        self.segments: list[Segment] = []
        self._parts: list[str] = []
        self._vbytes = 0
        self._value: str | None = ""
        self._bytes: bytes | None = b""
        self._starts: list[int] | None = []

    def add(self, text: str, sstart: int, send: int, exact: bool, size: int | None = None) -> None:
        """Append `text` (`size` bytes in UTF-8, when known), read from file bytes [sstart, send)."""
        n = len(text.encode("utf-8")) if size is None else size
        last = self.segments[-1] if self.segments else None
        if exact and last is not None and last.exact and last.vend == self._vbytes and last.send == sstart:
            last.vend += n
            last.send = send
        else:
            self.segments.append(Segment(self._vbytes, self._vbytes + n, sstart, send, exact))
            self._starts = None
        self._parts.append(text)
        self._vbytes += n
        self._value = self._bytes = None

    def extend(self, other: "TextMap") -> None:
        data = other.value_bytes
        for seg in other.segments:
            self.add(data[seg.vstart:seg.vend].decode("utf-8"), seg.sstart, seg.send, seg.exact, seg.vend - seg.vstart)

    @property
    def value(self) -> str:
        if self._value is None:
            self._value = "".join(self._parts)
            self._parts = [self._value]
        return self._value

    @property
    def value_bytes(self) -> bytes:
        if self._bytes is None:
            self._bytes = self.value.encode("utf-8")
        return self._bytes

    def _index(self, v: int) -> int:
        """Index of the segment holding value byte `v` (the last one starting at or before it)."""
        if self._starts is None:
            self._starts = [s.vstart for s in self.segments]
        return max(bisect.bisect_right(self._starts, v) - 1, 0)

    def _segment(self, v: int) -> Segment | None:
        return self.segments[self._index(v)] if self.segments else None

    def start(self, v: int) -> int:
        """File offset where the value byte `v` begins (a unit maps to its start)."""
        seg = self._segment(v)
        if seg is None:
            return 0
        if v >= seg.vend:
            return seg.send
        if seg.exact:
            return seg.sstart + (v - seg.vstart)
        return seg.sstart

    def end(self, v: int) -> int:
        """File offset where the value ending at byte `v` ends (a unit maps to its end)."""
        if v <= 0 or not self.segments:
            return self.start(v)
        seg = self._segment(v - 1)
        if seg.exact:
            return seg.sstart + (v - seg.vstart)
        return seg.send

    def boundary(self, v: int) -> int | None:
        """File offset of value position `v` when it is an exact boundary (edits may start or end
        there), else None (inside an escape sequence or field)."""
        segments = self.segments
        if not segments:
            return 0
        self._index(v)  # (the starts, built once)
        i = bisect.bisect_left(self._starts, v)
        if i < len(segments) and segments[i].vstart == v:  # the first unit there (an empty one too)
            return segments[i].sstart
        seg = segments[i - 1] if i > 0 else None
        if seg is not None and seg.vstart < v < seg.vend:
            return seg.sstart + (v - seg.vstart) if seg.exact else None
        if v == segments[-1].vend:
            return segments[-1].send
        return None

    def unit_before(self, v: int) -> tuple[int, int]:
        """(value, file) offsets where the unit ending at value boundary `v` > 0 starts: a
        whole escape or field, or one character of a verbatim run."""
        seg = self.segments[self._index(v - 1)]
        if not seg.exact:
            return seg.vstart, seg.sstart
        data = self.value_bytes
        u = v - 1
        while u > seg.vstart and data[u] & 0xC0 == 0x80:  # back to the first byte of a character
            u -= 1
        return u, seg.sstart + (u - seg.vstart)

    def unit_after(self, v: int) -> tuple[int, int]:
        """(value, file) offsets where the unit starting at value boundary `v` ends."""
        seg = self.segments[self._index(v)]
        if not seg.exact:
            return seg.vend, seg.send
        data = self.value_bytes
        u = v + 1
        while u < seg.vend and data[u] & 0xC0 == 0x80:
            u += 1
        return u, seg.sstart + (u - seg.vstart)


@dataclass(frozen=True)
class LiteralSyntax:
    """How one literal is written: prefix letters and quote."""

    prefix: str
    quote: str

    @property
    def raw(self) -> bool:
        return "r" in self.prefix.lower()

    @property
    def is_bytes(self) -> bool:
        return "b" in self.prefix.lower()

    @property
    def is_fstring(self) -> bool:
        return "f" in self.prefix.lower()

    @property
    def triple(self) -> bool:
        return len(self.quote) == 3


def split_literal(token: str) -> tuple[LiteralSyntax, str]:
    """(syntax, body) of a string token such as `r'''...'''`."""
    i = 0
    while i < len(token) and token[i] not in "'\"":
        i += 1
    prefix, rest = token[:i], token[i:]
    quote = rest[:3] if rest[:3] in ("'''", '"""') else rest[:1]
    return LiteralSyntax(prefix, quote), rest[len(quote):len(rest) - len(quote)]


def decode_into(out: TextMap, body: str, body_start: int, syntax: LiteralSyntax, *,
                fields: bool = False, braces: bool = False) -> None:
    """Append the value of a literal body (which starts at file byte `body_start`) to `out`.

    `braces`: `{{` / `}}` stand for one brace (f-string text, str.format); `fields`: a `{...}`
    replacement field becomes PLACEHOLDER (str.format). Verbatim runs go in whole."""
    raw, is_bytes = syntax.raw, syntax.is_bytes
    special = _special(raw, braces or fields)
    pos = body_start  # file byte offset of body[i]
    i, n = 0, len(body)

    def width(a: int, b: int) -> int:
        return len(body[a:b].encode("utf-8"))

    while i < n:
        m = special.search(body, i)
        j = n if m is None else m.start()
        if j > i:  # a verbatim run
            run = body[i:j]
            size = len(run.encode("utf-8"))
            out.add(run, pos, pos + size, exact=True, size=size)
            pos += size
            i = j
            continue
        c = body[i]
        if c == "\\" and not raw:
            text, used = _escape(body, i, is_bytes)
            end = pos + width(i, i + used)
            out.add(text, pos, end, exact=False)
        elif c == "\r":
            used = 2 if body[i + 1:i + 2] == "\n" else 1
            end = pos + used
            out.add("\n", pos, end, exact=False)
        elif braces and c in "{}" and body[i + 1:i + 2] == c:
            used = 2
            end = pos + 2
            out.add(c, pos, end, exact=False)
        elif fields and c == "{":
            close = body.find("}", i)
            used = (close - i + 1) if close != -1 else n - i
            end = pos + width(i, i + used)
            out.add(PLACEHOLDER, pos, end, exact=False)
        else:  # a brace that is no unit: verbatim
            used = 1
            end = pos + width(i, i + 1)
            out.add(c, pos, end, exact=True)
        pos = end
        i += used


@lru_cache(maxsize=None)
def _special(raw: bool, braces: bool) -> re.Pattern:
    """What may start a unit of a body: a backslash (unless raw), a CR, a brace (with braces)."""
    return re.compile("[" + ("" if raw else "\\\\") + "\r" + ("{}" if braces else "") + "]")


def _escape(body: str, i: int, is_bytes: bool) -> tuple[str, int]:
    """Value and length of the escape sequence at body[i] (a backslash)."""
    nxt = body[i + 1:i + 2]
    if nxt == "":
        return "\\", 1
    if nxt == "\n":
        return "", 2  # line continuation
    if nxt == "\r":
        return "", 3 if body[i + 2:i + 3] == "\n" else 2
    if nxt in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[nxt], 2
    m = _OCTAL.match(body, i + 1)
    if m:
        return chr(int(m.group(), 8) & (0xFF if is_bytes else 0x1FF)), 1 + len(m.group())
    if nxt in _HEX and not (is_bytes and nxt != "x"):
        digits = body[i + 2:i + 2 + _HEX[nxt]]
        if len(digits) == _HEX[nxt] and all(d in "0123456789abcdefABCDEF" for d in digits):
            return chr(int(digits, 16)), 2 + len(digits)
    if nxt == "N" and not is_bytes and body[i + 2:i + 3] == "{":
        close = body.find("}", i)
        if close != -1:
            import unicodedata

            try:
                return unicodedata.lookup(body[i + 3:close]), close - i + 1
            except KeyError:
                pass
    return "\\" + nxt, 2  # not an escape: Python keeps the backslash


def encode_for(text: str, syntax: LiteralSyntax) -> str | None:
    """`text` written inside a literal of this syntax so that it reads back as `text`, or None
    when the literal kind cannot hold it (checked again by evaluating the result)."""
    q = syntax.quote[0]
    if syntax.is_bytes and not text.isascii():
        return None
    if syntax.raw:
        if "\\" in text or q in text or ("\n" in text and not syntax.triple) or "\r" in text:
            return None
        return text
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == q:
            out.append("\\" + q)
        elif ch == "\n":
            out.append("\n" if syntax.triple else "\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)
