"""File names that are not UTF-8 (Latin-1 trees, names from old archives) are files like any
other: found, read, cached, fixed, copied, renamed and reported (their bytes written as `\\xe9`
escapes wherever a report shows them), never a traceback, whatever the locale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

DIRTY = b"#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"
FIXED = b"#include <hip/hip_runtime.h>\nvoid f(float* p) { hipFree(p); }\n"
NAME, FOLDER = b"k\xe9rnel.cu", b"sub\xff"


def _tree(tmp_path: Path) -> bytes:
    tree = os.fsencode(tmp_path / "tree")
    os.makedirs(os.path.join(tree, FOLDER))
    for rel in (NAME, os.path.join(FOLDER, b"a.cu"), b"plain.cu"):
        with open(os.path.join(tree, rel), "wb") as fh:
            fh.write(DIRTY)
    return tree


def _run(args, cwd: bytes, locale: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if locale:
        env["LC_ALL"] = locale
    r = subprocess.run([sys.executable, "-m", "cuda2hip", *args], cwd=cwd, capture_output=True, env=env)
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    return r


@pytest.mark.parametrize("locale", [None, "C"])
@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github", "markdown", "html"])
@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_reports_of_a_tree_with_non_utf8_names(tmp_path, fmt, locale, cache):
    tree = _tree(tmp_path)
    args = ["check", "--format", fmt, *([] if cache else ["--no-cache"]), "."]
    for _ in range(2 if cache else 1):  # a second run is served by the result cache
        r = _run([*args, "-o", "report"], tree, locale)
        assert r.returncode == 1, r.stdout + r.stderr
    with open(os.path.join(tree, b"report"), "rb") as fh:
        report = fh.read().decode("utf-8")  # a report is UTF-8 text, whatever the names
    assert ("k%E9rnel.cu" if fmt == "sarif" else "k\\xe9rnel.cu" if fmt in ("text", "concise", "github")
            else "rnel.cu") in report
    if fmt == "json":
        paths = {f["path"] for f in json.loads(report)["findings"]}
        assert paths == {"k\\xe9rnel.cu", "sub\\xff/a.cu", "plain.cu"}, paths
    r = _run(["check", "--format", fmt, "."], tree, locale)  # on the terminal (here a pipe)
    assert r.returncode == 1 and b"rnel.cu" in r.stdout


@pytest.mark.parametrize("locale", [None, "C"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_fix_of_a_tree_with_non_utf8_names(tmp_path, locale, jobs):
    tree = _tree(tmp_path)
    for i in range(20 if jobs == "2" else 0):  # enough files for worker processes
        with open(os.path.join(tree, FOLDER, b"m%d.cu" % i), "wb") as fh:
            fh.write(DIRTY)
    diff = _run(["fix", "--diff", "-j", jobs, "."], tree, locale)
    assert diff.returncode == 1 and b"rnel.cu" in diff.stdout and b"+#include <hip/hip_runtime.h>" in diff.stdout
    r = _run(["fix", "--stdout", NAME], tree, locale)
    assert r.returncode == 0 and r.stdout == FIXED, r.stderr
    out = os.path.join(os.path.dirname(tree), b"out")
    r = _run(["fix", "--output-dir", out, "-j", jobs, tree], tree, locale)
    assert r.returncode == 0, r.stderr
    for rel in (NAME, os.path.join(FOLDER, b"a.cu")):
        with open(os.path.join(out, rel), "rb") as fh:
            assert fh.read() == FIXED
    r = _run(["fix", "--report", "report.html", "-j", jobs, "."], tree, locale)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(tree, NAME), "rb") as fh:
        assert fh.read() == FIXED
    r = _run(["fix", "--rename", "."], tree, locale)
    assert r.returncode == 0, r.stdout + r.stderr
    assert os.path.exists(os.path.join(tree, b"k\xe9rnel.hip"))
