"""Signals end a run as a user expects: a Ctrl-C, a SIGTERM or a hang-up ends it cleanly
(workers end, no temporary file is left, every file written is complete) with the shell's
status for the signal (128 + its number), whenever it comes; a signal the caller ignores
(`nohup`, a background job's SIGINT) stays ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT


@pytest.mark.parametrize("args", [["check", "."], ["check", "-vj1", "."]], ids=["options", "click"])
def test_a_ctrl_c_while_the_check_sets_up_ends_it_as_interrupted(args):
    """In the caller's own process too: a Ctrl-C before the files are read (the settings, the
    rules) ended with a traceback, not with "interrupted" and 130; and a command line that only
    click parses (`-vj1`) ended a Ctrl-C with click's "Aborted!" and 1."""
    code = ("import cuda2hip.cli.commands as cli\n"
            "def settings(opts):\n"
            "    raise KeyboardInterrupt\n"
            "cli._settings = settings\n"
            "cli.entry()\n")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, (r.returncode, r.stderr)


def _corpus(tmp_path: Path, lines: int) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import generate
    finally:
        sys.path.pop(0)
    tree = tmp_path / "tree"
    generate(tree, lines, seed=3, file_lines=200)
    return tree


@pytest.mark.parametrize("signame, to", [("SIGTERM", "parent"), ("SIGTERM", "group"), ("SIGHUP", "parent")])
def test_a_terminated_parallel_fix_ends_its_workers_and_leaves_no_partial_file(tmp_path, signame, to):
    """SIGTERM (a CI job's timeout, `kill`) or SIGHUP (a closed terminal) to a `fix -j 2`: the
    parent died at once while its workers went on rewriting files, temporary files stayed, and
    the status said nothing of the signal. Now: the workers stop after their current file, every
    file is complete or untouched, no temporary file is left, exit 128 + the signal's number."""
    signum = getattr(signal, signame)
    tree = _corpus(tmp_path, 60_000)
    original = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "fix", "--no-cache", "-j", "2", str(tree)],
                            cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.read_bytes() != v for p, v in original.items() if p.suffix == ".cu"):
            break
        time.sleep(0.02)
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers, "no worker processes ran"
    if to == "group":
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, (proc.returncode, stdout[-2000:], stderr[-2000:])
    assert signame in stderr and "Traceback" not in stderr, stderr
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, alive
    assert not [p for p in tree.rglob("*") if p.name.endswith(".cuda2hip-tmp")]
    changed = [p for p, v in original.items() if p.read_bytes() != v]
    assert changed and len(changed) < len([p for p in original if p.suffix == ".cu"])  # cut short
    for p in changed:  # complete: the text `fix` writes, which a second run leaves as it is
        assert b"cuda_runtime.h" not in p.read_bytes()


def test_a_hang_up_the_caller_ignores_stays_ignored(tmp_path):
    """`nohup cuda2hip fix ...`: SIGHUP was set to be ignored before the run started."""
    tree = _corpus(tmp_path, 20_000)
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "fix", "--no-cache", "-j", "2", str(tree)],
                            cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    time.sleep(1.0)
    for p in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]:
        try:
            p.send_signal(signal.SIGHUP)
        except psutil.NoSuchProcess:
            pass
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), (proc.returncode, stderr[-2000:])
    assert not [p for p in tree.rglob("*.cu") if b"cuda_runtime.h" in p.read_bytes()]
