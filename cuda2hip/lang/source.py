"""Source model: the original bytes of a file, its encoding and newline style, and
byte <-> line/column mapping.

All analysis works on UTF-8 bytes (tree-sitter's native input); the BOM, if any, is stripped
on read and restored on write, and line endings are never normalised, so an untouched region of
a file is written back byte for byte.

A file that is not UTF-8 (real CUDA code carries Windows-1252 bytes in comments: a 0x92
apostrophe) is read as Windows-1252, or as Latin-1 where it holds the five bytes Windows-1252
leaves undefined. Both are single-byte encodings in which every byte decodes to one character
and encodes back to the same byte, so the file is analysed as UTF-8 text and written back in
its own encoding with every byte outside the edits as it was, whatever the file's real 8-bit
encoding is. UTF-16 and binary files are refused.
"""

from __future__ import annotations

import bisect
import os
import re
from pathlib import Path

from msgspec import Struct

_NEWLINE = re.compile(rb"\n")  # '\n' ends a line (see SourceText.line_starts)
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Sniff this many leading bytes for NUL to recognise binary files (as git and grep do).
BINARY_SNIFF_BYTES = 8192
# 8-bit encodings tried, in order, for a file that is not UTF-8 (see the module docstring).
EIGHT_BIT = (("cp1252", "Windows-1252"), ("latin-1", "Latin-1"))
ENCODING_NAMES = dict(EIGHT_BIT)
# C0 control bytes that do not occur in text (what is left after tab, line breaks, form feed,
# vertical tab, escape and the DOS end-of-file mark): a file that is not UTF-8 and holds them is
# taken for binary.
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c\x1a\x1b")


class SourceError(Exception):
    """Input that cannot be treated as source text (binary, undecodable, unreadable, missing)."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def detect_newline(data: bytes) -> str:
    """The file's dominant newline style; '\\n' for files without line breaks."""
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    cr = data.count(b"\r") - crlf
    if crlf >= lf and crlf >= cr and crlf > 0:
        return "\r\n"
    if cr > lf:
        return "\r"
    return "\n"


def _utf16(head: bytes) -> str | None:
    """The UTF-16 encoding of a file whose first bytes are `head`, as iconv names it: "UTF-16"
    after a byte-order mark (iconv reads and drops it), "UTF-16LE" / "UTF-16BE" for text whose
    every other byte is mostly NUL (ASCII in UTF-16 without a mark); None if not UTF-16."""
    if head.startswith(UTF16_BOMS):
        return "UTF-16"
    even, odd = head[0::2], head[1::2]
    if len(head) >= 4:
        if odd.count(0) >= 0.9 * len(odd) and not even.count(0):
            return "UTF-16LE"
        if even.count(0) >= 0.9 * len(even) and not odd.count(0):
            return "UTF-16BE"
    return None


def decode_source(raw: bytes, path: str | os.PathLike = "<input>", *,
                  eight_bit: bool = True) -> tuple[bytes, bool, str]:
    """Validate `raw` as text; return (utf-8 bytes without BOM, had_bom, encoding). Not UTF-8:
    read as Windows-1252 or Latin-1 when `eight_bit`, else refused. Raises SourceError."""
    head = raw[:BINARY_SNIFF_BYTES]
    if b"\x00" in head or raw.startswith(UTF16_BOMS):
        wide = _utf16(head)
        if wide is not None:
            why = ("it starts with a UTF-16 byte-order mark" if wide == "UTF-16" else
                   f"every other byte is NUL, as in ASCII text in {wide}")
            raise SourceError(path, f"UTF-16 text ({why}); left untouched: convert it to UTF-8 to "
                                    f"migrate it (`iconv -f {wide} -t UTF-8`)")
        raise SourceError(path, "binary file (contains NUL bytes); left untouched")
    bom = raw.startswith(UTF8_BOM)
    data = raw[len(UTF8_BOM):] if bom else raw
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        where = f"byte 0x{data[exc.start]:02x} at offset {exc.start + (3 if bom else 0)}, line {line}"
        if not eight_bit or bom:  # a UTF-8 BOM says what the file is meant to be
            raise SourceError(path, f"not valid UTF-8 ({where}); left untouched") from None
        if head.translate(None, _CONTROL) != head:
            raise SourceError(path, f"binary file (not UTF-8: {where}, and control bytes no text "
                                    "holds); left untouched") from None
        encoding = eight_bit_encoding(data)
        return data.decode(encoding).encode("utf-8"), False, encoding
    return data, bom, "utf-8"


def eight_bit_encoding(data: bytes) -> str:
    """The 8-bit encoding a file that is not UTF-8 is read in (see the module docstring)."""
    for encoding, _ in EIGHT_BIT:
        try:
            data.decode(encoding)
            return encoding
        except UnicodeDecodeError:
            continue
    return EIGHT_BIT[-1][0]


class SourceText(Struct, dict=True):
    """Text of one file as UTF-8 bytes plus what is needed to write it back unchanged."""

    path: str
    data: bytes
    bom: bool = False
    newline: str = "\n"
    encoding: str = "utf-8"  # of the file; `data` is always UTF-8 (see the module docstring)
    # A file whose only line breaks are CR (old Mac): `data` holds LF in their place (same
    # offsets), which tree-sitter and the rules read as line breaks; `to_bytes` puts CR back.
    cr_only: bool = False

    # Not fields (unannotated: outside equality and repr), set on the instance when known:
    # list[int] of line starts; whether `data` is ASCII; and, set by the fix loop on a text it
    # made by editing a linted one, (that text's tree, its bytes, the changes) for an
    # incremental re-parse (parse.parse_source).
    _line_starts = None
    _ascii = None
    _lines = None  # line number -> its text (line_text), for reports that show a line often
    edited_from = None

    @classmethod
    def from_bytes(cls, raw: bytes, path: str | os.PathLike = "<input>", *, eight_bit: bool = True) -> "SourceText":
        data, bom, encoding = decode_source(raw, path, eight_bit=eight_bit)
        newline = detect_newline(data)
        if newline == "\r" and b"\n" not in data:
            return cls(path=str(path), data=data.replace(b"\r", b"\n"), bom=bom, encoding=encoding, cr_only=True)
        _refuse_cr_breaks(data, path)
        return cls(path=str(path), data=data, bom=bom, newline=newline, encoding=encoding)

    @classmethod
    def read(cls, path: str | os.PathLike) -> "SourceText":
        return cls.from_bytes(read_bytes(path), path)

    def with_data(self, data: bytes) -> "SourceText":
        """The same file (path, BOM, newline style) holding other content."""
        return SourceText(path=self.path, data=data, bom=self.bom, newline=self.newline, encoding=self.encoding,
                          cr_only=self.cr_only)

    def to_bytes(self) -> bytes:
        """The file's bytes, in its encoding and line breaks. Raises SourceError when an edit put
        in a character the file's 8-bit encoding cannot hold (then nothing is written)."""
        data = self.data.replace(b"\n", b"\r") if self.cr_only else self.data
        if self.encoding != "utf-8":
            try:
                return data.decode("utf-8").encode(self.encoding)
            except UnicodeEncodeError as exc:
                raise SourceError(self.path, f"a fix would put {exc.object[exc.start]!r} into a "
                                             f"{ENCODING_NAMES[self.encoding]} file, which cannot hold it; "
                                             "left untouched") from None
        return (UTF8_BOM if self.bom else b"") + data

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    # -- positions -------------------------------------------------------------------------
    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            # '\n' ends a line: in LF and CRLF files, and in CR-only ones as held (see cr_only)
            # a match per newline: ~2x faster than a find() loop, and no copy of the text
            self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self.data)]
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts Unicode code points."""
        starts = self.line_starts
        idx = bisect.bisect_right(starts, offset) - 1
        start = starts[idx]
        if self._ascii is None:
            self._ascii = self.data.isascii()
        if self._ascii and 0 <= offset <= len(self.data):
            return idx + 1, offset - start + 1  # one byte per code point, nothing to slice
        segment = self.data[start:offset]
        col = len(segment.decode("utf-8", errors="replace")) if not segment.isascii() else len(segment)
        return idx + 1, col + 1

    def span(self, start: int, end: int) -> tuple[int, int, int, int]:
        """`position(start) + position(end)`, the end computed from the start when the range is
        ASCII text on one line (a name, a call: what most findings cover)."""
        line, col = self.position(start)
        if self._ascii and 0 <= start <= end <= len(self.data) and \
                self.data.find(b"\n", start, end) == -1:
            return line, col, line, col + (end - start)
        end_line, end_col = self.position(end)
        return line, col, end_line, end_col

    def offset(self, line: int, column: int) -> int:
        """Byte offset of a 1-based (line, column in code points); inverse of `position`."""
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            raise ValueError(f"line {line} out of range 1..{len(starts)}")
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.data)
        prefix = self.data[start:end].decode("utf-8", errors="replace")[:column - 1]
        return start + len(prefix.encode("utf-8"))

    def line_text(self, line: int) -> str:
        """The text of a 1-based line without its line break."""
        lines = self._lines
        if lines is None:
            lines = self._lines = {}
        got = lines.get(line)
        if got is None:
            starts = self.line_starts
            if line < 1 or line > len(starts):
                return ""
            start = starts[line - 1]
            end = starts[line] if line < len(starts) else len(self.data)
            got = lines[line] = self.data[start:end].decode("utf-8", errors="replace").rstrip("\r\n")
        return got

    def line_start(self, offset: int) -> int:
        """Byte offset of the start of the line that holds `offset`."""
        starts = self.line_starts
        return starts[bisect.bisect_right(starts, offset) - 1]

    def line_end(self, offset: int) -> int:
        """Byte offset just past the line break of the line that holds `offset`."""
        starts = self.line_starts
        idx = bisect.bisect_right(starts, offset)
        return starts[idx] if idx < len(starts) else len(self.data)

    def indentation_at(self, offset: int) -> str:
        """Leading whitespace of the line that holds `offset`."""
        start = self.line_start(offset)
        end = start
        data = self.data
        while end < len(data) and data[end] in b" \t":
            end += 1
        return data[start:end].decode("ascii")


# A CR that is not part of CRLF and has code after it on its line: compilers (clang, gcc) take
# it for a line break, tree-sitter does not (a `//` comment or a directive would swallow the code).
_SPLITTING_CR = re.compile(rb"\r(?!\n)[ \t\f\v]*[^\s]")


def _refuse_cr_breaks(data: bytes, path) -> None:
    """CR-only line breaks in a file that also has LF ones: which bytes end a line depends on
    the reader, so the file is refused rather than read differently from the compiler."""
    m = _SPLITTING_CR.search(data) if b"\r" in data else None
    if m is not None:
        line = data.count(b"\n", 0, m.start()) + 1
        raise SourceError(path, f"mixed line endings: CR-only line breaks (the first in line {line}) "
                                "among LF ones, which compilers and this parser would read "
                                "differently; convert the file to one style (e.g. with dos2unix -c mac "
                                "or tr); left untouched")


def read_bytes(path: str | os.PathLike, real: str = "") -> bytes:
    """The raw bytes of a regular file; SourceError (with a reason for the report) when it
    cannot be read. `real`: where a walk found it (absolute, without links), read from there
    without following a link (system/nofollow.py); else `path`, links followed. Neither blocks on a
    FIFO nor reads a device."""
    from ..system.nofollow import Refused, read_found, read_path

    try:
        return read_found(real)[0] if real else read_path(path)
    except Refused as exc:
        raise SourceError(path, exc.reason) from None
    except FileNotFoundError:
        raise SourceError(path, "no such file (removed after discovery)") from None
    except IsADirectoryError:
        raise SourceError(path, "is a directory") from None
    except PermissionError:
        raise SourceError(path, "permission denied (unreadable)") from None
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from None
