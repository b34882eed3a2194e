"""The wheel users install (pip, pre-commit) holds every built-in rule file and the HTML report
templates, and building it gives no setuptools warnings about undeclared data folders."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration


def test_wheel_ships_every_rule_file_and_template(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    output = proc.stdout + proc.stderr
    assert "Package would be ignored" not in output
    assert "SPDX expression" not in output
    (wheel,) = tmp_path.glob("cuda2hip-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    rules = {f"cuda2hip/builtin_rules/{p.relative_to(ROOT / 'rules').as_posix()}"
             for p in (ROOT / "rules").rglob("*") if p.suffix in (".yaml", ".json")}
    assert len(rules) > 70
    assert rules - names == set()
    # every module: a package missing from pyproject's list installs without error and fails at run time
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "cuda2hip").rglob("*.py")}
    assert len(modules) > 50 and modules - names == set()
    templates = {f"cuda2hip/report/templates/{p.name}" for p in (ROOT / "cuda2hip/report/templates").iterdir()}
    assert templates and templates - names == set()
