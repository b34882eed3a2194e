"""`--format markdown` stays within `markdown-limit` (default 65,536 characters: a GitHub PR
comment): the summary and the per-rule table in full, then the most severe findings, then a
line that says how many were left out and how to get them all."""

from __future__ import annotations

import re

from cuda2hip.report.markdown import size

from conftest import run_cli

LIMIT = 65536
# 6,040 findings over 40 files: renames (warnings, one line per name and file), 1,200 unknown CUDA
# names (warnings, a message each) and one error per file
LINE = "void f{i}() {{ cudaStream_t s; cudaStreamCreate(&s); cudaMalloc(&p, 4); cudaFree(p); cudaUnknownThing{n}x{i}(); }}\n"
SELECT = "HIP101,HIP102,HIP190"


def _tree(root):
    (root / "src").mkdir()
    for n in range(40):
        body = "".join(LINE.format(i=i, n=n) for i in range(30))
        (root / "src" / f"k{n:02}.cu").write_text(f"void e{n}() {{ cudaDeviceFlushGPUDirectRDMAWrites(a, b); }}\n" + body)


def _check(root, *extra):
    proc = run_cli("check", "--isolated", "--no-cache", "--select", SELECT, "--format", "markdown", *extra,
                   "src", cwd=root)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


def _shown(md: str) -> int:
    """Findings listed: each file's `N findings, K shown` (or all N)."""
    total = 0
    for n, k in re.findall(r"</code>: (\d+) findings?(?:, (\d+) shown)?</summary>", md):
        total += int(k or n)
    return total


def test_a_large_tree_fits_in_a_pull_request_comment(tmp_path):
    _tree(tmp_path)
    md = _check(tmp_path)
    assert size(md) <= LIMIT
    assert "| Findings | 6040 |" in md and "| `HIP101` cuda-runtime-api | 4800 |" in md  # the summary in full
    assert "| `HIP190` unknown-cuda-name | 1200 |" in md
    # what needs a person comes first: every error, then unknown names (no fix) before renames
    assert md.count("**HIP102**") == 40
    assert 0 < md.count("**HIP190**") < 1200 and md.count("**HIP101**") == 0
    shown = _shown(md)
    assert f"**Not shown: {6040 - shown} of 6040 findings**" in md
    assert "`--markdown-limit 0` shows everything" in md
    # the lists are well-formed: every <details> is closed
    assert md.count("<details>") == md.count("</details>")


def test_the_limit_is_configurable_and_0_means_none(tmp_path):
    _tree(tmp_path)
    small = _check(tmp_path, "--markdown-limit", "8000")
    assert size(small) <= 8000 and "Not shown" in small
    everything = _check(tmp_path, "--markdown-limit", "0")
    assert "Not shown" not in everything and _shown(everything) == 6040
    # one line per rule, message and file: a name renamed 30 times in a file is one line
    assert everything.count("**HIP101**") == 40 * 4 and everything.count("**HIP190**") == 1200
    (tmp_path / "cuda2hip.toml").write_text("markdown-limit = 20000\n")
    proc = run_cli("check", "--select", SELECT, "--format", "markdown", "--no-cache", "src", cwd=tmp_path)
    assert 8000 < size(proc.stdout) <= 20000


def test_a_report_that_fits_is_whole(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(LINE.format(i=0, n=0))
    md = _check(tmp_path)
    assert "Not shown" not in md and md.count("**HIP101**") == 4 and md.count("**HIP190**") == 1


def test_fix_report_diffs_are_left_out_whole_when_they_do_not_fit(tmp_path):
    _tree(tmp_path)
    proc = run_cli("fix", "--isolated", "--no-cache", "--select", "HIP101,HIP102", "--report", "r.md",
                   "--markdown-limit", "30000", "src", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert size(md) <= 30000
    shown = md.count("```diff")
    assert 0 < shown < 40 and re.search(rf"\*\*Not shown: [^*]*{40 - shown} diffs\*\*", md)
    assert md.count("```diff") == md.count("\n```\n")  # no diff is cut in the middle
