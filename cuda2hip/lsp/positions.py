"""Byte offsets (what findings and edits hold: offsets into the UTF-8 text) to LSP positions and
back. A position is a 0-based line and a character offset counted in the encoding the client
and the server agreed on (`positionEncoding`): UTF-16 code units unless the client offers
UTF-8 or UTF-32. Lines end at LF, CRLF or CR, as the protocol says."""

from __future__ import annotations

import bisect
import re

from lsprotocol import types

_BREAK = re.compile(rb"\r\n|\r|\n")


class LineIndex:
    """Positions in one text (its UTF-8 bytes)."""

    def __init__(self, data: bytes, encoding: str = types.PositionEncodingKind.Utf16):
        self.data = data
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _BREAK.finditer(data)]

    def _line_end(self, line: int) -> int:
        """End of `line`'s content (before its line break)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            end -= 2 if self.data[end - 2:end] == b"\r\n" else 1
            return end
        return len(self.data)

    def _units(self, chunk: bytes) -> int:
        if chunk.isascii() or self.encoding == types.PositionEncodingKind.Utf8:
            return len(chunk)
        text = chunk.decode("utf-8", errors="replace")
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        # an offset inside a CRLF pair is the end of the line's content
        offset = min(offset, self._line_end(line))
        return types.Position(line=line, character=self._units(self.data[start:offset]))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def offset(self, position: types.Position) -> int:
        """The byte offset of `position`; past the end of a line: the line's end, past the last
        line: the end of the text (as the protocol asks of positions beyond them)."""
        if position.line >= len(self.starts):
            return len(self.data)
        start = self.starts[position.line]
        end = self._line_end(position.line)
        chunk = self.data[start:end]
        want = position.character
        if chunk.isascii() or self.encoding == types.PositionEncodingKind.Utf8:
            if self.encoding == types.PositionEncodingKind.Utf8 and want < len(chunk):
                # not inside a character
                while want > 0 and (chunk[want] & 0xC0) == 0x80:
                    want -= 1
            return start + min(want, len(chunk))
        units = 0
        text = chunk.decode("utf-8", errors="replace")
        at = start
        for ch in text:
            if units >= want:
                break
            units += 1 if self.encoding == types.PositionEncodingKind.Utf32 or ord(ch) < 0x10000 else 2
            at += len(ch.encode("utf-8"))
        return at
