"""The processes the tests start run the code of this checkout."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pathlib import Path

from conftest import ROOT

pytestmark = pytest.mark.integration


def test_a_started_process_imports_this_checkout(tmp_path):
    # From a directory outside the checkout, as run_cli and the other CLI tests run it.
    r = subprocess.run([sys.executable, "-c", "import cuda2hip; print(cuda2hip.__file__)"], cwd=tmp_path,
                       capture_output=True, text=True, check=True)
    assert Path(r.stdout.strip()).resolve().is_relative_to(ROOT)
