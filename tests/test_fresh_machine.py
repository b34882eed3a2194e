"""tests/harness/without_test_deps.py, which .ci/run uses to run the README's commands as on a fresh
machine: what it hides, the command does not find, and the rest of the machine still does."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration

HIDER = ROOT / "tests" / "harness" / "without_test_deps.py"
PROBE = ("import shutil, pathlib; print(shutil.which('git'), pathlib.Path('/usr/share/git-core').is_dir() "
         "and any(pathlib.Path('/usr/share/git-core').iterdir()))")


def test_hidden_packages_are_gone_for_the_command_only():
    if shutil.which("git") is None or shutil.which("dpkg") is None:
        pytest.skip("needs git installed from a Debian package")
    res = subprocess.run([sys.executable, HIDER, "--only", "git", "--", sys.executable, "-c", PROBE],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    if "cannot hide" in res.stderr:
        pytest.skip(res.stderr.strip())
    assert res.stdout.split() == ["None", "False"]  # the executable, and a directory only git fills
    assert shutil.which("git") is not None  # outside the namespace: untouched
