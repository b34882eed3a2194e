"""Issue 13: files that are not UTF-8 (Windows-1252 / Latin-1 bytes in comments) are migrated like
any other, every byte outside the edits kept, written back in their encoding, with an info
finding (HIP006) naming the encoding assumed. UTF-16 and binary files stay refused."""

from __future__ import annotations

import re

import json
import shutil
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from cuda2hip.lang.source import SourceError, SourceText

# A 0x92 apostrophe, 0x93/0x94 quotes and an e-acute, as editors on Windows write them.
CP1252 = (b"// Don\x92t edit: caf\xe9 \x93quoted\x94\n#include <cuda_runtime.h>\n"
          b"int main() { float* p; cudaMalloc(&p, 4); /* \xe9\x80\xbf */ cudaFree(p); }\n")
MIGRATED = CP1252.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(b"cudaMalloc", b"hipMalloc") \
    .replace(b"cudaFree", b"hipFree")


def _cli(*args, cwd):
    """The CLI as a process, output as bytes (stdout may be in the file's encoding)."""
    return subprocess.run([sys.executable, "-m", "cuda2hip", *map(str, args)], cwd=cwd, capture_output=True)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text("")
    (tmp_path / "w.cu").write_bytes(CP1252)
    return tmp_path


def test_windows_1252_file_is_migrated_byte_for_byte(project):
    proc = _cli("fix", "--no-cache", "--format", "json", "w.cu", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (project / "w.cu").read_bytes() == MIGRATED
    notes = [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "HIP006"]
    assert [(n["severity"], n["line"], n["column"]) for n in notes] == [("info", 1, 7)]
    assert "Windows-1252" in notes[0]["message"] and "0x92" in notes[0]["message"]
    # fix on its own output changes nothing
    assert _cli("fix", "--no-cache", "--diff", "w.cu", cwd=project).stdout == b""


def test_stdout_and_diff_are_in_the_files_encoding(project, tmp_path):
    assert _cli("fix", "--no-cache", "--stdout", "w.cu", cwd=project).stdout == MIGRATED
    diff = _cli("fix", "--no-cache", "--diff", "w.cu", cwd=project).stdout
    assert b"-// Don\x92t" not in diff and b"+#include <hip/hip_runtime.h>" in diff
    assert (project / "w.cu").read_bytes() == CP1252
    applied = tmp_path / "applied"
    applied.mkdir()
    (applied / "w.cu").write_bytes(CP1252)
    if shutil.which("patch") is not None:  # the diff applies with patch (GNU patch, where installed)
        assert subprocess.run(["patch", "-p1", "-s"], input=diff, cwd=applied).returncode == 0
        assert (applied / "w.cu").read_bytes() == MIGRATED


def test_columns_count_one_per_byte(project):
    (project / "w.cu").write_bytes(b"/* \xe9\xe9 */ int x = cudaSuccess;\n")
    found = json.loads(_cli("check", "--no-cache", "--format", "json", "w.cu", cwd=project).stdout)["findings"]
    assert [(f["line"], f["column"]) for f in found if f["code"] == "HIP101"] == [(1, 18)]


def test_latin_1_where_windows_1252_has_no_character(project):
    data = b"// \x81 \x8d \xe9\nint main() { cudaDeviceSynchronize(); }\n"
    (project / "w.cu").write_bytes(data)
    proc = _cli("fix", "--no-cache", "--format", "concise", "--show-info", "w.cu", cwd=project)
    assert (project / "w.cu").read_bytes() == (b"// \x81 \x8d \xe9\n#include <hip/hip_runtime.h>\n"
                                               b"int main() { hipDeviceSynchronize(); }\n")
    assert b"HIP006" in proc.stdout and b"Latin-1" in proc.stdout


def test_captured_text_keeps_its_bytes(project):
    # A pattern fix copies the captured argument (a string holding an e-acute) into its output.
    rules = project / "rules"
    rules.mkdir()
    (rules / "usr.yaml").write_text(
        "code: USR100\nid: log-to-hip-log\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
        "rule: {pattern: cudaLog($A)}\nfix: {applicability: safe, template: hipLog($A)}\n"
        "docs: {what: w, why: y}\ntests: {valid: ['int x;']}\n")
    (project / "cuda2hip.toml").write_text('rule-dirs = ["rules"]\nselect = ["USR100"]\n')
    (project / "w.cu").write_bytes(b'void f() { cudaLog("caf\xe9 \x92"); }\n')
    assert _cli("fix", "--no-cache", "w.cu", cwd=project).returncode == 0
    assert (project / "w.cu").read_bytes() == b'void f() { hipLog("caf\xe9 \x92"); }\n'
    # a fix that would put a character Windows-1252 cannot hold is refused, the file untouched
    (rules / "usr.yaml").write_text((rules / "usr.yaml").read_text().replace("hipLog($A)", "hipLog($A) /* \u2192 */"))
    (project / "w.cu").write_bytes(b'void f() { cudaLog("caf\xe9"); }\n')
    proc = run_cli("fix", "--no-cache", "w.cu", cwd=project)
    assert proc.returncode == 2 and "cannot hold it; left untouched" in proc.stdout, proc.stdout + proc.stderr
    assert (project / "w.cu").read_bytes() == b'void f() { cudaLog("caf\xe9"); }\n'


@pytest.mark.parametrize("name,data,reason", [
    ("utf16.cu", "int main() { cudaFree(0); }\n".encode("utf-16"), "UTF-16 text"),
    ("blob.cu", b"\x89PNG\r\n\x1a\n\x01\x02\x03\xff\xfe cudaMalloc", "binary file"),
    ("bom.cu", b"\xef\xbb\xbfint x; // caf\xe9\n", "not valid UTF-8 (byte 0xe9"),
    ("latin1.py", b"# caf\xe9\nimport cupy\n", "not valid UTF-8"),
])
def test_utf16_binary_and_others_stay_refused(project, name, data, reason):
    (project / name).write_bytes(data)
    proc = run_cli("fix", "--no-cache", name, cwd=project)
    assert proc.returncode == 2 and reason in proc.stdout, proc.stdout + proc.stderr
    assert (project / name).read_bytes() == data


# Text bytes: printable ASCII, tab, line breaks and every byte above 0x7F.
_BYTES = st.sampled_from([9, 10, 13, *range(32, 127), *range(128, 256)])


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(_BYTES, min_size=1, max_size=200))
@example(values=[10, 13])  # a lone CR after an LF: refused as mixed line endings
def test_any_8_bit_text_round_trips(values):
    raw = bytes(values) + b"\xff"  # never valid UTF-8
    try:
        source = SourceText.from_bytes(raw, "x.cu")
    except SourceError as exc:
        # Refused among these: UTF-16 byte-order marks, and CR-only line breaks mixed with LF ones
        # (compilers and the parser would see different lines: tests/test_layout_kept.py).
        lone_cr = re.search(rb"\r(?!\n)", raw) is not None and b"\n" in raw.replace(b"\r\n", b"")
        assert raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (lone_cr and "mixed line endings" in exc.reason), \
            exc.reason
        return
    assert source.encoding in ("cp1252", "latin-1")
    assert source.to_bytes() == raw
    assert source.data.decode("utf-8")  # analysed as UTF-8 text
