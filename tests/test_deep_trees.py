"""Deep syntax trees (generated code: a 100,000-term sum, 50,000 nested parentheses) are
processed in time near-linear in their size, and no node is missed. The time bound is on the CPU
time of the process (this machine's load makes wall time meaningless), with a wall-time
timeout so that a regression fails instead of hanging."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cuda2hip.engine.context import FileContext
from cuda2hip.engine.frontends.cuda import _WORDS, _nodes_spelled, capture
from cuda2hip.lang import parse as parsing
from cuda2hip.lang.source import SourceText
from cuda2hip.settings import Settings

TERMS = 100_000


def _sum(n: int, name: str = "cudaMemcpyHostToDevice") -> str:
    return "#include <cuda_runtime.h>\nint f() { return " + " + ".join([name] * n) + "; }\n"


def _nested(n: int) -> str:
    return ("#include <cuda_runtime.h>\nint f() { return " + "(cudaMemcpyHostToDevice + " * n + "1"
            + ")" * n + "; }\nvoid g(float* p) { cudaFree(p); }\n")


def _cpu_bounded(args, cwd: Path, cpu_seconds: float) -> tuple[subprocess.CompletedProcess, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "cuda2hip", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=40 * cpu_seconds,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "CUDA2HIP_CACHE_DIR": str(cwd / "cache")})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, cpu


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["sum", "nested"])
def test_deep_expressions_are_checked_and_fixed_in_bounded_time(tmp_path, shape):
    text = _sum(TERMS) if shape == "sum" else _nested(TERMS // 2)
    f = tmp_path / "gen.cu"
    f.write_text(text)
    r, cpu = _cpu_bounded(["check", "--format", "concise", "--no-cache", "gen.cu"], tmp_path, 5)
    assert r.returncode == 1 and cpu < 5, (cpu, r.stderr[-500:])
    assert r.stdout.count("HIP101") == (TERMS if shape == "sum" else TERMS // 2 + 1)
    r, cpu = _cpu_bounded(["fix", "--no-cache", "gen.cu"], tmp_path, 5)
    assert r.returncode == 0 and cpu < 5, (cpu, r.stdout[-500:], r.stderr[-500:])
    assert f.read_text() == text.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("cuda", "hip")


def test_a_tree_deeper_than_queries_go_is_walked_and_nothing_is_missed():
    # tree-sitter's query cursor counts depth in 16 bits: beyond it, it misses nodes.
    n = 70_000
    source = SourceText.from_bytes(_sum(n, "a").encode(), "gen.cu")
    tree = parsing.parse("cuda", source.data)
    assert not parsing.queryable(tree.root_node)
    assert parsing.queryable(parsing.parse("cuda", _sum(1000, "a").encode()).root_node)
    parsing._walked["dispatch"] = parsing.WALK_BYTES_BEFORE_QUERY  # as late in a run
    ctx = FileContext(source=source, tree=tree, language="cuda", settings=Settings())
    found = capture(ctx, frozenset({"binary_expression"}), False)
    assert len(found["node"]) == n - 1


def _fixture_sources():
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip"))


def test_nodes_found_by_text_are_those_a_lookup_from_the_root_finds():
    """The one-pass cursor search gives, for every identifier-shaped word, exactly the nodes
    `descendant_for_byte_range` from the root gives (the former per-occurrence lookup)."""
    files = _fixture_sources()
    assert len(files) > 50
    for path in files + [None]:
        data = path.read_bytes() if path else _nested(300).encode()
        root = parsing.parse("cuda", data).root_node
        words = set(_WORDS.findall(data))
        got = _nodes_spelled(root, data, words)
        for word in words:
            expected = []
            start = data.find(word)
            while start != -1:
                node = root.descendant_for_byte_range(start, start + len(word))
                if node is not None and (node.start_byte, node.end_byte) == (start, start + len(word)):
                    expected.append(node)
                start = data.find(word, start + len(word))
            assert got[word] == expected, (path, word)


# --- bounded work: time that grows linearly with the input (issue 32) ---------------------------

def _cpu_of(args, cwd: Path) -> float:
    """CPU seconds of the analysis of `args` in this process (start-up left out), the best of two."""
    import contextlib
    import io
    import time

    from cuda2hip.cli.commands import main

    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                main([*args])
            except SystemExit:
                pass
        best = min(best, time.process_time() - start)
    return best


@pytest.fixture
def bounded(monkeypatch):
    """A wall-clock backstop: a regression to quadratic time fails instead of hanging the suite."""
    import signal

    def late(*_):
        raise TimeoutError("far slower than linear")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(600)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _calls(n: int) -> str:
    return "#include <cuda_runtime.h>\nint f() { return " + " + ".join(["cudaGetLastError()"] * n) + "; }\n"


def test_a_long_expression_of_calls_is_checked_in_linear_time(tmp_path, monkeypatch, bounded):
    """`cudaGetLastError() + ...` 50,000 times: each use's code context was found by climbing
    parent links from the deepest node (tree-sitter finds a parent from the root down), which
    made the check quadratic (10,000 terms: 33 s and 10 GB with the text report)."""
    monkeypatch.chdir(tmp_path)
    for n in (5_000, 50_000):
        (tmp_path / f"calls{n}.cu").write_text(_calls(n))
    small = _cpu_of(["check", "--no-cache", "--format", "concise", "calls5000.cu"], tmp_path)
    large = _cpu_of(["check", "--no-cache", "--format", "concise", "calls50000.cu"], tmp_path)
    assert large < 25 * small + 1.0, (small, large)  # 10x the input: ~10x the time, not 100x
    text = _cpu_of(["check", "--no-cache", "calls50000.cu"], tmp_path)  # the text report's frames too
    assert text < 3 * large + 1.0, (large, text)


def _kernel_module(kb: int) -> str:
    body = "__global__ void k(float* p) { p[threadIdx.x] = 0; cudaDeviceSynchronize(); }\\n"
    return "import cupy\nk = cupy.RawKernel(\"" + body * (kb * 1024 // len(body)) + "\", \"k\")\n"


@pytest.mark.parametrize("command", [["check", "--format", "concise"], ["fix", "--diff"]], ids=["check", "fix"])
def test_cuda_in_a_python_string_is_decoded_in_linear_time(tmp_path, monkeypatch, bounded, command):
    """The value of a kernel string and the map back to the file were built by appending to a
    string one character at a time and looked up by a scan of every piece, and each fix was
    checked by evaluating the whole literal again: quadratic (400 KB: 70 s; 5 MB: hours)."""
    monkeypatch.chdir(tmp_path)
    for kb in (64, 640):
        (tmp_path / f"k{kb}.py").write_text(_kernel_module(kb))
    small = _cpu_of([*command, "--no-cache", "k64.py"], tmp_path)
    large = _cpu_of([*command, "--no-cache", "k640.py"], tmp_path)
    assert large < 25 * small + 1.0, (small, large)
