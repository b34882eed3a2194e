"""Signals end a run as a user expects: a Ctrl-C, a SIGTERM or a hang-up ends it cleanly
(workers end, no temporary file is left, every file written is complete) with the shell's
status for the signal (128 + its number), whenever it comes; a signal the caller ignores
(`nohup`, a background job's SIGINT) stays ignored."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("args", [["check", "."], ["check", "-vj1", "."]], ids=["options", "click"])
def test_a_ctrl_c_while_the_check_sets_up_ends_it_as_interrupted(args):
    """In the caller's own process too: a Ctrl-C before the files are read (the settings, the
    rules) ended with a traceback, not with "interrupted" and 130; and a command line that only
    click parses (`-vj1`) ended a Ctrl-C with click's "Aborted!" and 1."""
    code = ("import cuda2hip.cli as cli\n"
            "def settings(opts):\n"
            "    raise KeyboardInterrupt\n"
            "cli._settings = settings\n"
            "cli.entry()\n")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, (r.returncode, r.stderr)
