"""The source model: decoding, newline style, BOM and byte <-> line/column mapping."""

from __future__ import annotations

import pytest

from cuda2hip.lang.source import SourceError, SourceText


def test_positions_count_code_points_and_round_trip():
    src = SourceText.from_bytes("int é = 1;\n  cudaFree(p); // ü\n".encode())
    off = src.data.index(b"cudaFree")
    assert src.position(off) == (2, 3)
    assert src.offset(2, 3) == off
    after = src.data.index("é".encode()) + len("é".encode())
    assert src.position(after) == (1, 6)
    assert src.offset(1, 6) == after


@pytest.mark.parametrize("raw,newline", [(b"a\nb\n", "\n"), (b"a\r\nb\r\n", "\r\n"), (b"a\rb\r", "\r"), (b"ab", "\n")])
def test_newline_style(raw, newline):
    src = SourceText.from_bytes(raw)
    # CR-only files are held with LF line breaks (what the parser reads) and written with CR
    assert (src.newline, src.cr_only) == (("\n", True) if newline == "\r" else (newline, False))
    assert src.to_bytes() == raw


def test_crlf_lines():
    src = SourceText.from_bytes(b"one\r\ntwo\r\n")
    assert src.position(src.data.index(b"two")) == (2, 1)
    assert src.line_text(2) == "two"


def test_bom_is_kept_out_of_offsets_and_restored():
    src = SourceText.from_bytes(b"\xef\xbb\xbfint x;\n")
    assert src.bom and src.data == b"int x;\n" and src.position(4) == (1, 5)
    assert src.with_data(b"int y;\n").to_bytes() == b"\xef\xbb\xbfint y;\n"


def test_binary_and_undecodable_input():
    with pytest.raises(SourceError, match="binary"):
        SourceText.from_bytes(b"abc\x00def")
    with pytest.raises(SourceError, match=r"not valid UTF-8 \(byte 0xe9 at offset 7, line 2\)"):
        SourceText.from_bytes(b"int a;\n\xe9;\n", eight_bit=False)
    latin = SourceText.from_bytes(b"int a;\n\xe9;\n")  # read as Windows-1252 (test_source_encoding.py)
    assert latin.encoding == "cp1252" and latin.data == "int a;\n\xe9;\n".encode() and latin.position(9) == (2, 2)


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_span_is_both_positions(nl):
    import random

    rng = random.Random(7)
    for _ in range(200):
        lines = ["".join(rng.choice("ab c;\t") for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))]
        text = nl.join(lines) + rng.choice(["", nl])
        if rng.random() < 0.3:
            text = text.replace("a", "é")
        raw = text.encode()
        n = len(SourceText.from_bytes(raw, "x.cu").data)
        for _ in range(30):
            a, b = rng.randint(0, n), rng.randint(0, n)
            expected = SourceText.from_bytes(raw, "x.cu")
            got = SourceText.from_bytes(raw, "x.cu").span(a, b)
            assert got == expected.position(a) + expected.position(b)
