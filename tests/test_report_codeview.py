"""Code shown in the HTML report: the flagged range is marked at the right code points, also
after non-ASCII text, with CRLF line ends and in unhighlightable files."""

from __future__ import annotations

import re

from cuda2hip.findings import Applicability, Edit, Finding, Fix, Severity
from cuda2hip.report import codeview
from cuda2hip.source import SourceText


def _finding(src: SourceText, needle: str, fix: Fix | None = None) -> Finding:
    start = src.data.index(needle.encode())
    end = start + len(needle.encode())
    line, col = src.position(start)
    end_line, end_col = src.position(end)
    return Finding("HIP101", "cuda-runtime-api", Severity.WARNING, src.path, start, end, line, col,
                   end_line, end_col, "msg", fix=fix)


def _marked(frame) -> list[tuple[int, str]]:
    return [(ln.number, "".join(re.findall(r"<mark>(.*?)</mark>", re.sub(r"</?span[^>]*>", "", str(ln.html)))))
            for ln in frame if ln.marked]


def test_mark_after_non_ascii_text_with_crlf():
    src = SourceText.from_bytes("int a;\r\n/* é ✓ */ cudaStream_t s;\r\nint b;\r\n".encode(), "k.cu")
    f = _finding(src, "cudaStream_t")
    frame = codeview.frame(codeview.highlight(src, "k.cu"), f)
    assert [ln.number for ln in frame] == [1, 2, 3]
    assert _marked(frame) == [(2, "cudaStream_t")]


def test_mark_spanning_lines_and_plain_text_files():
    src = SourceText.from_bytes(b"x\nfoo(a,\n    b);\ny\n", "notes.unknown-ext")
    f = _finding(src, "foo(a,\n    b)")
    frame = codeview.frame(codeview.highlight(src, src.path), f)
    assert _marked(frame) == [(2, "foo(a,"), (3, "    b)")]


def test_lone_cr_files_stay_plain_but_numbered_like_the_finding():
    src = SourceText.from_bytes(b"int a;\rcudaFree(p);\r", "old.cu")
    f = _finding(src, "cudaFree")
    lines = codeview.highlight(src, "old.cu")
    assert len(lines) == len(src.line_starts)
    assert _marked(codeview.frame(lines, f)) == [(2, "cudaFree")]


def test_html_is_escaped():
    src = SourceText.from_bytes(b'#include <cuda.h> // "<b>"\n', "a.cu")
    html = str(codeview.render_tokens(codeview.highlight(src, "a.cu")[0]))
    assert "<cuda.h>" not in html and "&lt;cuda.h&gt;" in html and "<b>" not in html


def test_fix_preview_shows_the_line_before_and_after():
    src = SourceText.from_bytes(b"int a;\n  cudaMalloc(&p, n); cudaFree(p);\n", "a.cu")
    start = src.data.index(b"cudaMalloc")
    fix = Fix(Applicability.SAFE, (Edit(start, start + len("cudaMalloc"), "hipMalloc"),))
    preview = codeview.fix_preview(src, fix)
    assert [(p.kind, p.text) for p in preview] == [("del", "  cudaMalloc(&p, n); cudaFree(p);"),
                                                   ("add", "  hipMalloc(&p, n); cudaFree(p);")]
    # An insertion at the end of the file and a deletion of a whole line.
    line_end = src.data.index(b"\n") + 1
    fix = Fix(Applicability.SAFE, (Edit(0, line_end, ""),))
    assert [(p.kind, p.text) for p in codeview.fix_preview(src, fix)] == [("del", "int a;")]
