"""Start-up of a pre-commit style run (issue 15): what a single-file `check` imports and
compiles."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from cuda2hip.lang.lazy_regex import LazyRegex


@pytest.mark.parametrize("command", ["check", "fix"])
def test_single_file_run_does_not_import_dataclasses(command, tmp_path):
    """dataclasses (with the inspect it imports) costs ~32 M instructions to import and ~2 M per
    class: the data classes of a check or fix are msgspec Structs. (inspect itself is not
    checked: msgspec imports typing_extensions, which imports it, where a dev tool installed it.)"""
    (tmp_path / "a.cu").write_text("#include <cuda_runtime.h>\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\n"
                                   "void f(float* p) { cudaMalloc(&p, 4); k<<<1, 1>>>(p); }\n")
    # (the interpreter's site may have imported some of them already: only the run's own count)
    code = ("import sys\nbefore = set(sys.modules)\nfrom cuda2hip.cli.main import main\n"
            f"try:\n    main(['{command}', '--no-cache', 'a.cu'])\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted({'dataclasses'} & (set(sys.modules) - before)))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # (the first run of this code makes the index of the checks, importing every one: engine/families.py)
    (tmp_path / "warm").mkdir()
    (tmp_path / "warm" / "w.cu").write_text("void f() {}\n")
    subprocess.run([sys.executable, "-m", "cuda2hip", "check", "w.cu"], cwd=tmp_path / "warm", env=env, capture_output=True)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    # the run did analyse the file
    assert ("HIP101" in r.stdout if command == "check" else "hipMalloc" in (tmp_path / "a.cu").read_text()), \
        r.stdout + r.stderr
    assert "LOADED []" in r.stdout, r.stdout + r.stderr


def test_lazy_regex_compiles_once_when_first_used(monkeypatch):
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: compiled.append(args) or real(*args))
    lazy = LazyRegex(rb"a(b+)", re.IGNORECASE)
    assert compiled == []
    assert lazy.search(b"xABB").group(1) == b"BB"
    assert [m.span() for m in lazy.finditer(b"ab ab")] == [(0, 2), (3, 5)]
    assert lazy.match(b"x") is None and lazy.pattern == rb"a(b+)" and lazy.flags & re.IGNORECASE
    assert compiled == [(rb"a(b+)", re.IGNORECASE)]


def test_builtin_rules_are_listed_and_fingerprinted_once(monkeypatch):
    """The engine and unknown-cuda-header both load the built-in rules: the second load walks
    no folder (and so computes no fingerprint)."""
    from cuda2hip.rulebook import loader

    sources = [loader.RuleSource(loader.builtin_rules_dir(), builtin=True)]
    loader.load_rules(sources)  # the rule cache exists after this one
    rules = loader.load_rules(sources)
    walked = []
    monkeypatch.setattr(loader, "rule_files", lambda directory, data=None: walked.append(directory) or [])
    assert loader.load_rules(sources) is rules and walked == []
    # user rules are listed again every time (a test may have edited them)
    loader.load_rules([*sources, loader.RuleSource(loader.builtin_rules_dir() / "api", builtin=False)])
    assert walked


def test_a_run_reads_the_rules_without_their_test_cases(tmp_path, monkeypatch):
    """The store keeps the rules' test cases apart (a third of the rule data, read by every
    start-up otherwise): a later process gets the rules without them, and `tests=True` (`rules
    test`) gets them back, from the store or, when it lacks them, from the files."""
    from cuda2hip.cache import store
    from cuda2hip.rulebook import loader

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    sources = [loader.RuleSource(loader.builtin_rules_dir(), builtin=True)]

    def fresh_process():
        store.flush()
        for memo in (loader._LOADED, loader._BUILTIN):
            memo.clear()
        loader._WITHOUT_TESTS.clear()

    fresh_process()
    first = loader.load_rules(sources)  # from the YAML files, with their cases
    cases = {r.code: r.tests for r in first}
    assert sum(len(t.valid) + len(t.invalid) for t in cases.values()) > 100
    fresh_process()
    again = loader.load_rules(sources)
    assert all(not r.tests.valid and not r.tests.invalid for r in again)
    assert {r.code: r.tests for r in loader.load_rules(sources, tests=True)} == cases
    fresh_process()
    loader.load_rules(sources)
    monkeypatch.setattr(store, "get", lambda k, real=store.get: None if k == store.key("rule-tests", loader._load_rules_keyed(sources, True)[1]) else real(k))
    assert {r.code: r.tests for r in loader.load_rules(sources, tests=True)} == cases


def test_rule_files_come_in_path_order(tmp_path):
    """Listed as strings, sorted as paths: `a/b.yaml` before `a-c/x.yaml` ('/' sorts after '-'
    in a string), since the order of the files keys the rule cache."""
    from pathlib import Path

    from cuda2hip.rulebook.loader import rule_files

    for rel in ("a-c/x.yaml", "a/b.yaml", "a/b/c.yaml", "a.yaml", "A/z.yaml", "a b/q.yaml", "data/t.yaml", "n.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    got = rule_files(tmp_path)
    assert got == sorted(got, key=Path) and all(isinstance(p, Path) for p in got)
    assert [p.relative_to(tmp_path).as_posix() for p in got] == [
        "A/z.yaml", "a/b/c.yaml", "a/b.yaml", "a b/q.yaml", "a-c/x.yaml", "a.yaml"]


def test_a_check_reads_the_rules_data_files_without_pyyaml(tmp_path):
    """The YAML data files of the checks (device polyfills, enum-by-parameter, build tables)
    come from the store once parsed: a later run imports no PyYAML (~14 ms of a one-file check)."""
    (tmp_path / "a.cu").write_text(
        "#include <cusolverDn.h>\n__device__ unsigned f(unsigned a, unsigned b) { return __vadd2(a, b); }\n"
        "void g(cusolverDnHandle_t h, float* A, int* info) { cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, 4, A, 4, A, 4, info); }\n")
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\ntarget_link_libraries(k CUDA::cublas)\n")
    code = ("import sys\nfrom cuda2hip.cli.main import main\n"
            "try:\n    main(['check', '--no-cache', 'a.cu', 'CMakeLists.txt'])\nexcept SystemExit:\n    pass\n"
            "print('YAML', 'yaml' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA2HIP_CACHE_DIR=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "HIP133" in first.stdout and "HIPSOLVER_FILL_MODE_LOWER" in first.stdout, first.stdout + first.stderr
    again = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert again.stdout == first.stdout.replace("YAML True", "YAML False"), again.stdout + again.stderr
    assert "YAML False" in again.stdout
