"""The committed docs/rules/ pages are what tools/generate_rule_docs.py makes from the rules."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_committed_rule_pages_are_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_rule_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_notices_a_stale_page(tmp_path):
    script = str(ROOT / "tools" / "generate_rule_docs.py")
    assert subprocess.run([sys.executable, script, "--out", str(tmp_path)], capture_output=True).returncode == 0
    (tmp_path / "HIP101.md").write_text("old text\n")
    (tmp_path / "HIP999.md").write_text("a rule that is gone\n")
    r = subprocess.run([sys.executable, script, "--out", str(tmp_path), "--check"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "HIP101.md" in r.stdout and "HIP999.md" in r.stdout


def test_page_matches_explain():
    r = subprocess.run([sys.executable, "-m", "cuda2hip", "explain", "HIP101", "--config", str(ROOT / "pyproject.toml")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs" / "rules" / "HIP101.md").read_text(encoding="utf-8")
    assert page.startswith(r.stdout.rstrip("\n"))
