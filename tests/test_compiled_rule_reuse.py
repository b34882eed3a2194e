"""Compiled built-in rules outlive a run's engine (match/compile_cache.py): runs
one after the other in one process — a resident server's fork after its warm-up, or a test
calling main() — give what a fresh process gives, whatever settings each run has."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

import pytest

from conftest import ROOT

# Settings that compiled rules read (target, library profile, launch style, experimental rules)
RUNS = [[], ["--target-rocm", "5.2"], ["--roc"], ["--kernel-launch", "hip"], ["--experimental"],
        ["--target-rocm", "6.4", "--roc"], []]


def _in_process(args: list[str]) -> tuple[int, bytes]:
    from cuda2hip.cli import main

    sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    code = 0
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code or 0
    sink.flush()
    return code, sink.buffer.getvalue()


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    from cuda2hip.resident.warm_up import Workspace

    return Workspace(str(tmp_path_factory.mktemp("reuse") / "ws")).cases


@pytest.mark.parametrize("command", ["check", "fix"])
def test_runs_in_one_process_give_what_fresh_processes_give(cases, command, monkeypatch):
    monkeypatch.chdir(cases)
    base = [command, "--isolated", "--no-cache", "-j", "1", "--format", "json"]
    if command == "fix":
        base.append("--diff")
    for extra in RUNS:
        here = _in_process([*base, *extra, "."])
        fresh = subprocess.run([sys.executable, "-m", "cuda2hip", *base, *extra, "."], cwd=cases,
                               capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert here == (fresh.returncode, fresh.stdout), extra


def test_a_rule_is_compiled_once_per_settings_that_matter(tmp_path):
    from cuda2hip.match.engine import Engine
    from cuda2hip.settings import Settings

    def compiled(**kw):
        engine = Engine(Settings(**kw))
        rule = next(r for r in engine.all_rules if r.id == "cuda-runtime-api")
        return engine.compile(rule)

    compiled()  # the first load of a fresh rule cache writes it; later loads share the rules
    a = compiled(root=tmp_path)
    b = compiled(root=tmp_path / "elsewhere")
    assert a is b and b.settings.root == tmp_path / "elsewhere"  # the run's own settings
    assert compiled(target_rocm="5.2") is not a
    assert compiled(library_profile="roc") is not a
    assert compiled(kernel_launch="hip") is not a and compiled(experimental=True) is not a
