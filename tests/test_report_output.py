"""Where a report goes: output that cannot be written (a full disk, a closed pipe) is one clear
error line and exit 2, never a traceback or a silent success; a report file that is a device or
a FIFO is written into, never replaced by a regular file; code frames stay proportional to the
findings (long lines are cut) and never pass a source's control characters to the terminal."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT

DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); cudaMalloc(&p, 4); }\n"


def _run(args, cwd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cuda2hip", *map(str, args)], cwd=cwd, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, **kw)


def _one_error_line(stderr: str, reason: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("cuda2hip: error:") and reason in lines[0], stderr


@pytest.mark.parametrize("args", [["check"], ["check", "--format", "json"], ["check", "--format", "concise"],
                                  ["check", "--statistics"], ["fix", "--diff"], ["fix", "--stdout"]],
                         ids=" ".join)
def test_output_to_a_full_disk_is_one_error_line_and_exit_2(tmp_path, args):
    (tmp_path / "a.cu").write_text(DIRTY)
    with open("/dev/full", "w") as full:
        r = _run([*args, "a.cu"], tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert r.returncode == 2, r.stderr
    _one_error_line(r.stderr, "No space left on device")
    assert (tmp_path / "a.cu").read_text() == DIRTY


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_output_to_a_closed_pipe_is_one_error_line_and_exit_2(tmp_path, fmt):
    # enough findings that the report cannot fit in the pipe's buffer before the reader leaves
    (tmp_path / "a.cu").write_text(DIRTY + "void g(float* p) { cudaFree(p); }\n" * 20_000)
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "check", "--format", fmt, "a.cu"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 2, stderr
    _one_error_line(stderr, "Broken pipe")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_report_file_that_is_a_fifo_is_written_into(tmp_path):
    (tmp_path / "a.cu").write_text(DIRTY)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    r = _run(["check", "--format", "json", "-o", fifo, "a.cu"], tmp_path, capture_output=True, timeout=120)
    reader.join(timeout=60)
    assert r.returncode == 1, r.stderr
    assert got and '"findings"' in got[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".cuda2hip-tmp")]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("option", ["-o", "--report"])
def test_a_report_file_that_is_a_device_is_written_into_not_replaced(tmp_path, option):
    """As root, `-o /dev/full` (or /dev/null) replaced the device node with a regular file."""
    (tmp_path / "a.cu").write_text(DIRTY)
    full = tmp_path / "full.html"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # what /dev/full is
    null = tmp_path / "null.html"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null
    r = _run(["fix", option, full, "a.cu"] if option == "--report" else ["check", option, full, "a.cu"],
             tmp_path, capture_output=True)
    assert r.returncode == 2, r.stdout + r.stderr
    _one_error_line(r.stderr, "No space left on device")
    (tmp_path / "b.cu").write_text(DIRTY)  # (the fix run before fixed a.cu, then failed on its report)
    r = _run(["check", option, null, "b.cu"] if option == "-o" else ["fix", "--diff", option, null, "b.cu"],
             tmp_path, capture_output=True)
    assert r.returncode == 1, r.stdout + r.stderr
    for node in (full, null):
        assert stat.S_ISCHR(os.lstat(node).st_mode), node
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".cuda2hip-tmp")]


def test_a_report_file_named_through_a_symlink_is_written_through_it(tmp_path):
    (tmp_path / "a.cu").write_text(DIRTY)
    (tmp_path / "reports").mkdir()
    real = tmp_path / "reports" / "latest.json"
    real.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to("reports/latest.json")
    r = _run(["check", "--format", "json", "-o", link, "a.cu"], tmp_path, capture_output=True)
    assert r.returncode == 1, r.stderr
    assert link.is_symlink() and '"findings"' in real.read_text()


# -- code frames -------------------------------------------------------------------------------

def test_code_frames_of_a_long_line_stay_short(tmp_path):
    """A 1 MB one-line file gave each finding the whole line as its frame: tens of MB of report
    (and gigabytes for thousands of findings on it)."""
    terms = 80_000
    line = "void f(float* p) { " + "cudaFree(p); " * terms + "}\n"
    (tmp_path / "long.cu").write_text("#include <cuda_runtime.h>\n" + line)
    r = _run(["check", "long.cu"], tmp_path, capture_output=True, timeout=600)
    assert r.returncode == 1, r.stderr[-2000:]
    assert r.stdout.count("HIP101") == terms
    assert max(len(x) for x in r.stdout.splitlines()) < 700
    assert len(r.stdout) < 2000 * terms  # each finding a few lines of at most 500 columns
    # the frame still shows the spot: the marker is under the name
    lines = r.stdout.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("long.cu:2:") and "HIP101" in x
             and int(x.split(":")[2]) > 500_000)
    k = next(k for k in range(i + 1, i + 5) if lines[k].lstrip().startswith("2 |"))
    code, marker = lines[k], lines[k + 1]
    at = marker.index("^")
    assert code[at:at + len("cudaFree")] == "cudaFree" and marker.count("^") == len("cudaFree")
    assert "…" in code


@pytest.mark.parametrize("fmt", ["text", "html", "markdown"])
def test_a_megabyte_line_with_a_few_findings_makes_a_small_report(tmp_path, fmt):
    line = "int v[] = {" + "1, " * 350_000 + "}; void f(float* p) { cudaFree(p); cudaFree(p); }\n"
    (tmp_path / "gen.cu").write_text("#include <cuda_runtime.h>\n" + line + line)
    r = _run(["check", "--format", fmt, "-o", "report", "gen.cu"], tmp_path, capture_output=True, timeout=600)
    assert r.returncode == 1, r.stderr[-2000:]
    size = (tmp_path / "report").stat().st_size
    assert size < (400_000 if fmt == "html" else 20_000), size  # the HTML page's own styles and script: ~200 KB


def test_control_characters_of_a_source_are_escaped_on_the_terminal(tmp_path):
    (tmp_path / "esc.cu").write_text(
        "#include <cuda_runtime.h>\n// \x1b[31mred\x1b[0m \x07 bell \x1b]0;title\x07\n"
        "void f(float* p) { /* \x1b[2J */ cudaFree(p); }\n")
    r = _run(["check", "esc.cu"], tmp_path, capture_output=True)
    assert r.returncode == 1, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert "\\x1b[31mred" in r.stdout and "\\x1b[2J" in r.stdout
    # the marker stays under the name on a line holding escapes
    lines = r.stdout.splitlines()
    head = next(k for k, x in enumerate(lines) if x.startswith("esc.cu:3:") and "HIP101" in x)
    code = next(k for k in range(head + 1, head + 5) if lines[k].lstrip().startswith("3 |"))
    at = lines[code + 1].index("^")
    assert lines[code][at:at + len("cudaFree")] == "cudaFree"
