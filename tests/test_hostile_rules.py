"""Hostile user rules fail fast and clearly: YAML alias bombs, catastrophic regexes. Each case
runs with a time bound (the defects were a 35 s / 6 GB alias bomb and a regex that never
returns)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_cli
from cuda2hip.rulebook.loader import RuleError, load_rule_file

HEAD = """\
code: USR101
id: hostile
kind: pattern
severity: warning
summary: s
message: m
docs: {what: w, why: y}
"""


def _alias_bomb(levels: int = 10, width: int = 9) -> str:
    """An anchor whose `any:` lists `width` aliases of the one before: width**levels rule
    objects once expanded, in a few hundred bytes."""
    defs = ["a0: &a0 {kind: identifier}"]
    for i in range(1, levels):
        defs.append(f"a{i}: &a{i} {{any: [{', '.join([f'*a{i - 1}'] * width)}]}}")
    return (HEAD + "options:\n" + "".join(f"  {d}\n" for d in defs) + f"rule: *a{levels - 1}\n"
            "tests: {valid: ['int x;']}\n")


def _write_rule(tmp_path, text: str):
    rules = tmp_path / "rules"
    rules.mkdir(exist_ok=True)
    path = rules / "hostile.yaml"
    path.write_text(text)
    (tmp_path / "cuda2hip.toml").write_text('rule-dirs = ["rules"]\n')
    (tmp_path / "a.cu").write_text("int aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab;\n")
    return path


def _bounded(seconds: float):
    """Assert the block took at most `seconds` of CPU time (the machine's load makes wall time
    meaningless; a hang still fails, on the CLI's wall-time timeout)."""
    class Timer:
        def __enter__(self):
            self.start = time.process_time()

        def __exit__(self, *exc):
            elapsed = time.process_time() - self.start
            assert elapsed < seconds, f"took {elapsed:.1f} s of CPU (bound {seconds} s)"
    return Timer()


def _limited_cli(*args, cwd, seconds: float, memory: int = 2 << 30):
    """The CLI in a process limited in time and address space (a regression must not take
    the machine's memory with it); returns it and the CPU seconds it took."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "cuda2hip", *args], cwd=cwd, capture_output=True,
                       text=True, timeout=seconds * 10, preexec_fn=limit,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                            "CUDA2HIP_CACHE_DIR": str(cwd / "cache")})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_alias_bomb_is_refused_in_well_under_a_second(tmp_path):
    path = _write_rule(tmp_path, _alias_bomb())
    assert len(path.read_bytes()) < 1500
    r, elapsed = _limited_cli("check", "a.cu", cwd=tmp_path, seconds=3)
    assert r.returncode == 2 and "hostile.yaml" in r.stderr and "alias bomb" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and elapsed < 3  # process start-up included
    with _bounded(0.5), pytest.raises(RuleError, match="alias bomb") as err:
        load_rule_file(path)
    assert str(path) in str(err.value)


def test_recursive_alias_is_refused(tmp_path):
    _write_rule(tmp_path, HEAD + "rule: &r {any: [*r]}\ntests: {valid: ['int x;']}\n")
    r, elapsed = _limited_cli("check", "a.cu", cwd=tmp_path, seconds=3)
    assert r.returncode == 2 and "recursive" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_aliases_within_bounds_still_work(tmp_path):
    path = _write_rule(tmp_path, HEAD + "options:\n  k: &k {kind: identifier, regex: '^aaa$'}\n"
                                        "rule: {any: [*k, *k]}\ntests: {valid: ['int b;']}\n")
    assert load_rule_file(path).rule.any[0].regex == "^aaa$"


# --- regular expressions -------------------------------------------------------------------

EVIL_IDENTIFIER = "a" * 35 + "b"


def _regex_rule(rule: str, valid="int b;", invalid="int aaa;") -> str:
    return (HEAD + f"rule: {rule}\n"
            f"tests: {{valid: [{valid!r}], invalid: [{{code: {invalid!r}}}]}}\n")


def test_catastrophic_regex_in_a_user_rule_runs_in_linear_time(tmp_path):
    # `^(a+)+$` backtracks exponentially in Python's re: the run used to hang.
    _write_rule(tmp_path, _regex_rule("{kind: identifier, regex: '^(a+)+$'}"))
    (tmp_path / "a.cu").write_text(f"int {EVIL_IDENTIFIER};\nint aaaa;\n")
    r, elapsed = _limited_cli("check", "--format", "concise", "--no-cache", "a.cu", cwd=tmp_path, seconds=5)
    assert elapsed < 5, elapsed
    assert r.returncode == 1 and r.stdout.count("USR101") == 1 and "a.cu:2:5" in r.stdout, r.stdout + r.stderr
    r, elapsed = _limited_cli("test-rules", "rules", cwd=tmp_path, seconds=5)
    assert r.returncode == 0 and elapsed < 5, r.stdout


@pytest.mark.parametrize("rule, what", [
    # RE2 has no lookaround: these run on Python's re, so nested repetition is refused.
    ("{kind: identifier, regex: '^(?=a)(a+)+$'}", "rule.regex"),
    ("{any: [{kind: identifier, regex: '(?<!x)(ab|a)*$'}]}", "rule.any[0].regex"),
    # py-tree-sitter evaluates #match? with Python's re.
    ("{query: '((identifier) @match (#match? @match \"^(a+)+$\"))'}", "rule.query"),
])
def test_backtracking_regex_that_re2_cannot_take_is_refused_at_load(tmp_path, rule, what):
    path = _write_rule(tmp_path, _regex_rule(rule))
    for args, code in ((["check", "a.cu"], 2), (["test-rules", "rules"], 1)):
        r, elapsed = _limited_cli(*args, cwd=tmp_path, seconds=5)
        out = r.stdout + r.stderr
        assert r.returncode == code and elapsed < 5, out
        assert path.name in out and "USR101 (hostile)" in out and what in out, out
        assert "backtracks exponentially" in out and "Traceback" not in out


OTHER_KINDS = f"""
import msgspec
from cuda2hip.checks.build.cmake_kinds import CMakeCommandRule
from cuda2hip.checks.python.env import EnvironmentRule
from cuda2hip.rulebook.schema import Rule
from cuda2hip.settings import Settings

common = {{"code": "USR201", "id": "x", "severity": "warning", "summary": "s", "message": "m",
          "docs": {{"what": "w", "why": "y"}}}}
cmake = msgspec.convert({{**common, "kind": "cmake-command", "language": "cmake",
                         "params": {{"match": {{"commands": ["set"], "argument": {{"regex": "^(a+)+$"}}}}}}}}, Rule)
env = msgspec.convert({{**common, "kind": "environment", "language": "python",
                       "params": {{"variables": ["X"], "value_regex": "^(a+)+$"}}}}, Rule)
assert CMakeCommandRule(cmake, Settings()).regexes[0].search("{EVIL_IDENTIFIER}") is None
assert EnvironmentRule(env, Settings()).value_re.search("{EVIL_IDENTIFIER}") is None
print("ok")
"""


def test_user_regexes_of_other_rule_kinds_use_re2():
    # In a child process: with a backtracking engine the search does not return.
    r = subprocess.run([sys.executable, "-c", OTHER_KINDS], capture_output=True, text=True,
                       timeout=20, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.stdout.strip() == "ok", r.stderr
