"""The language server's conversions: byte offsets <-> LSP positions in each position encoding,
and the text edits between two texts (properties over generated texts: non-ASCII characters,
astral ones, LF, CRLF and CR line breaks)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from cuda2hip.lsp.edits import byte_edits
from cuda2hip.lsp.positions import LineIndex
from lsp_support import index_of, position_of

ENCODINGS = ("utf-16", "utf-8", "utf-32")
texts = st.lists(st.sampled_from(["a", "x", " ", "é", "€", "😀", "\n", "\r\n", "\r", "cudaMalloc", "\\"]),
                 max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_positions_round_trip_at_every_character(text):
    data = text.encode("utf-8")
    for encoding in ENCODINGS:
        index = LineIndex(data, encoding)
        for i in range(len(text) + 1):
            if i and text[i - 1] == "\r" and text[i:i + 1] == "\n":
                continue  # inside a CRLF: not a position
            offset = len(text[:i].encode("utf-8"))
            pos = index.position(offset)
            assert pos == position_of(text, i, encoding), (text, i, encoding)
            assert index.offset(pos) == offset
            assert index_of(text, pos, encoding) == i


def test_positions_past_a_line_or_the_text():
    index = LineIndex("ab\r\ncd".encode(), "utf-16")
    assert index.offset(types.Position(line=0, character=99)) == 2  # the line's end, before CRLF
    assert index.offset(types.Position(line=7, character=0)) == 6
    assert index.position(3) == types.Position(line=0, character=2)  # between CR and LF: the line's end
    # UTF-8 units inside a character round down to its start
    assert LineIndex("é!".encode(), "utf-8").offset(types.Position(line=0, character=1)) == 0


def _apply(old: bytes, edits) -> bytes:
    out, pos = [], 0
    for start, end, text in edits:
        assert pos <= start <= end
        out += [old[pos:start], text.encode("utf-8")]
        pos = end
    return b"".join(out + [old[pos:]])


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_edits_make_the_new_text_and_split_nothing(a, b):
    old, new = a.encode("utf-8"), b.encode("utf-8")
    edits = byte_edits(old, new)
    assert _apply(old, edits) == new
    for start, end, _ in edits:
        old[:start].decode("utf-8")  # no edit starts or ends inside a character
        old[start:end].decode("utf-8")
        assert not (old[start - 1:start] == b"\r" and old[start:start + 1] == b"\n")
        assert not (old[end - 1:end] == b"\r" and old[end:end + 1] == b"\n")
    assert byte_edits(old, old) == []


def test_edits_are_the_characters_that_differ():
    old = "int a = cudaMalloc(&p, n);\nint b;\n".encode()
    new = "int a = hipMalloc(&p, n);\nint b;\n".encode()
    assert byte_edits(old, new) == [(8, 12, "hip")]
