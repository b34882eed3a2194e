"""Code shown in the reports: the lines the HTML page's frames and fix previews need (its
script marks the columns: tests/test_report_html_browser.py), and a fix's before / after."""

from __future__ import annotations

from pathlib import Path

from cuda2hip.findings import Applicability, Edit, Finding, Fix, Severity
from cuda2hip.lang.source import SourceText
from cuda2hip.report import codeview, html_data


def _finding(src: SourceText, needle: str, fix: Fix | None = None) -> Finding:
    start = src.data.index(needle.encode())
    end = start + len(needle.encode())
    line, col = src.position(start)
    end_line, end_col = src.position(end)
    return Finding("HIP101", "cuda-runtime-api", Severity.WARNING, src.path, start, end, line, col,
                   end_line, end_col, "msg", fix=fix)


class _Result:
    def __init__(self, path, findings):
        self.path, self.findings, self.fixed, self.error, self.changed = path, findings, [], None, False


class _Run:
    def __init__(self, path, findings):
        self.files = [_Result(path, findings)]
        self.findings = findings
        self.fixed = []


def _data(tmp_path: Path, raw: bytes, needle: str, name: str = "k.cu") -> dict:
    path = tmp_path / name
    path.write_bytes(raw)
    src = SourceText.read(path)
    return html_data.page_data(_Run(str(path), [_finding(src, needle)]), tmp_path, [])


def _lines(data) -> dict[int, object]:
    return {first + k: text for first, texts in data["lines"]["0"] for k, text in enumerate(texts)}


def test_lines_around_a_finding_without_line_breaks(tmp_path):
    data = _data(tmp_path, "int a;\r\n/* é ✓ */ cudaStream_t s;\r\nint b;\r\nint c;\r\nint d;\r\nint e;\r\n".encode(),
                 "cudaStream_t")
    assert _lines(data) == {1: "int a;", 2: "/* é ✓ */ cudaStream_t s;", 3: "int b;", 4: "int c;"}
    (row,) = data["findings"]
    assert row[:4] == [0, 2, 11, 23]  # file, line, column and end column in code points
    assert data["strings"][row[6]] == "msg"


def test_lone_cr_files_are_numbered_like_the_finding(tmp_path):
    data = _data(tmp_path, b"int a;\rcudaFree(p);\r", "cudaFree")
    assert _lines(data) == {1: "int a;", 2: "cudaFree(p);"}


def test_a_long_line_is_kept_as_a_window_around_the_finding(tmp_path):
    line = "x" * 5000 + " cudaFree(p); " + "y" * 5000
    data = _data(tmp_path, (line + "\n").encode(), "cudaFree")
    first, text = _lines(data)[1]
    assert len(text) <= html_data.LONG_LINE and text[5001 - first + 1:][:8] == "cudaFree"


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
