"""Line endings and padding the parser could misread: CR-only (old Mac) files are parsed with
their line breaks (never one long line whose first `//` comment hides the rest), mixed CR-only
breaks are refused clearly, tabs before a macro line's backslash stay tabs, and UTF-16 files are
named as such."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import run_cli
from cuda2hip.lang.source import SourceError, SourceText

CR_ONLY = (b"#include <cuda_runtime.h>\r// allocate and free\r"
           b"void f(float* p) {\r  cudaMalloc(&p, 4);\r  cudaFree(p);\r}\r")


def _concise(r) -> list[str]:
    return [line.split(" [")[0] for line in r.stdout.splitlines() if ": HIP" in line]


def test_cr_only_file_is_checked_line_by_line(tmp_path):
    # A `//` comment used to run to the end of the one line tree-sitter saw: "No findings".
    (tmp_path / "mac.cu").write_bytes(CR_ONLY)
    r = run_cli("check", "--format", "concise", "mac.cu", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert _concise(r) == ["mac.cu:1:10: HIP100", "mac.cu:4:3: HIP101", "mac.cu:5:3: HIP101"], r.stdout


def test_cr_only_file_is_fixed_and_keeps_its_line_endings(tmp_path):
    f = tmp_path / "mac.cu"
    f.write_bytes(CR_ONLY)
    r = run_cli("fix", "mac.cu", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f.read_bytes() == (b"#include <hip/hip_runtime.h>\r// allocate and free\r"
                              b"void f(float* p) {\r  hipMalloc(&p, 4);\r  hipFree(p);\r}\r")
    again = run_cli("fix", "mac.cu", cwd=tmp_path)
    assert again.returncode == 0 and "Fixed 0 findings" in again.stdout


@pytest.mark.parametrize("payload, line", [
    # mostly CR-only breaks, some LF: which is a line break depends on the reader
    (b"int a;\rint b;\rvoid f() { cudaFree(0); }\rint c;\n", 1),
    # an LF file whose comment is split by a CR-only break: compilers see `cudaFree` as code
    (b"#include <cuda_runtime.h>\nvoid f(float* p) {\n  // old\r  cudaFree(p);\n}\n", 3),
])
def test_mixed_cr_only_line_breaks_are_refused(tmp_path, payload, line):
    f = tmp_path / "mixed.cu"
    f.write_bytes(payload)
    for command in ("check", "fix"):
        r = run_cli(command, "mixed.cu", cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "CR-only line breaks" in r.stdout and f"line {line}" in r.stdout, r.stdout
    assert f.read_bytes() == payload


def test_crlf_and_stray_cr_before_a_line_break_still_work():
    text = SourceText.from_bytes(b"int a;\r\nint b;\r\r\n")
    assert text.newline == "\r\n" and text.to_bytes() == b"int a;\r\nint b;\r\r\n"


def test_cr_only_source_maps_back_byte_for_byte():
    text = SourceText.from_bytes(CR_ONLY, "mac.cu")
    assert b"\r" not in text.data and text.to_bytes() == CR_ONLY
    assert text.position(text.data.index(b"cudaFree")) == (5, 3)
    assert text.with_data(text.data.replace(b"cudaFree", b"hipFree")).to_bytes() == \
        CR_ONLY.replace(b"cudaFree", b"hipFree")


def test_tabs_before_a_continuation_backslash_stay_tabs(tmp_path):
    f = tmp_path / "macro.cu"
    f.write_bytes(b"#include <cuda_runtime.h>\n#define FREE(p)\t\tcudaFree(p);\t\t\\\n\tcudaDeviceSynchronize()\n"
                  b"#define X(p) cudaFree(p);     \\\n   0\n")
    assert run_cli("fix", "macro.cu", cwd=tmp_path).returncode == 0
    assert f.read_bytes() == (b"#include <hip/hip_runtime.h>\n#define FREE(p)\t\thipFree(p);\t\t\\\n"
                              b"\thipDeviceSynchronize()\n"
                              b"#define X(p) hipFree(p);      \\\n   0\n")  # spaces: realigned as before


@pytest.mark.parametrize("bom, encoding", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
                                           (b"", "utf-16-le"), (b"", "utf-16-be")])
def test_utf16_files_are_named_as_such(tmp_path, bom, encoding):
    # They were reported as "binary file (contains NUL bytes)" (without a byte-order mark, still
    # after main learnt the mark).
    code = "#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n"
    f = tmp_path / "wide.cu"
    f.write_bytes(bom + code.encode(encoding))
    r = run_cli("check", "wide.cu", cwd=tmp_path)
    assert r.returncode == 2 and "UTF-16 text" in r.stdout and "binary" not in r.stdout, r.stdout
    # the conversion the message suggests gives the file's text
    command = re.search(r"`(iconv [^`]+)`", r.stdout).group(1).split()
    if shutil.which("iconv") is None:
        pytest.skip("iconv is not installed")
    converted = subprocess.run(command + ["wide.cu"], cwd=tmp_path, capture_output=True, check=True).stdout
    assert converted == code.encode()


def test_binary_files_are_still_binary():
    with pytest.raises(SourceError, match="binary file"):
        SourceText.from_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00", "a.out")
