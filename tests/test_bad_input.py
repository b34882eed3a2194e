"""Bad input inside a tree: each case is reported with its path and reason, counted in the
summary, makes the exit code 2; the other files are still processed; the bad file is untouched.
Ctrl-C during a run leaves no partial file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from cuda2hip.engine.engine import Engine
from cuda2hip.lang.cxx.foreign_text import foreign_text_reason
from cuda2hip.pipeline import Mode, RunResult, run_files
from cuda2hip.project.discover import discover
from cuda2hip.settings import Settings

GOOD = "#include <cuda_runtime.h>\nvoid g(float* p) { cudaFree(p); }\n"
GOOD_FIXED = "#include <hip/hip_runtime.h>\nvoid g(float* p) { hipFree(p); }\n"
MARKDOWN = ("# Notes\n\nThis header is really *Markdown*:\n\n- a list item\n- another one\n\n"
            "See the [docs](https://example.invalid) for cudaMalloc.\n")


def _tree(tmp_path: Path, name: str, content: bytes) -> tuple[Path, Path]:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "good.cu").write_text(GOOD)
    bad = tree / name
    bad.write_bytes(content)
    return tree, bad


CASES = {
    "undecodable": ("utf16.cu", "void f() { /* caf\xe9 */ cudaFree(0); }\n".encode("utf-16"),
                    "UTF-16 text (it starts with a UTF-16 byte-order mark)"),
    "binary": ("blob.cu", b"\x7fELF\x02\x01\x01\x00\x00\x00cudaMalloc\x00\x00",
               "binary file (contains NUL bytes)"),
    "not-c": ("notes.h", MARKDOWN.encode(), "does not parse as C/C++/CUDA"),
}


@pytest.mark.parametrize("mode", ["check", "fix", "output-dir"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_in_a_tree(tmp_path, case, mode):
    name, content, reason = CASES[case]
    tree, bad = _tree(tmp_path, name, content)
    out = tmp_path / "out"
    args = {"check": ["check"], "fix": ["fix"], "output-dir": ["fix", "--output-dir", out]}[mode]
    res = run_cli(*args, tree)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"error: {bad.as_posix()}: {reason}" in res.stdout
    assert "1 file error." in res.stdout  # counted in the summary
    assert bad.read_bytes() == content  # untouched
    if mode == "check":
        assert "good.cu:2:20: HIP101" in res.stdout  # the other file is still processed
    elif mode == "fix":
        assert (tree / "good.cu").read_text() == GOOD_FIXED
    else:
        assert (out / "good.cu").read_text() == GOOD_FIXED
        assert (out / name).read_bytes() == content  # the copy is complete: copied as it is
        assert (tree / "good.cu").read_text() == GOOD


def test_fifo_with_a_source_name_is_not_read(tmp_path):
    tree, _ = _tree(tmp_path, "x.h", b"int x;\n")
    os.mkfifo(tree / "pipe.cu")  # reading it would block forever
    res = run_cli("fix", tree)
    assert res.returncode == 2
    assert f"error: {(tree / 'pipe.cu').as_posix()}: not a regular file" in res.stdout
    assert (tree / "good.cu").read_text() == GOOD_FIXED


def _without_read_override():
    """Root reads any file; drop that capability so that chmod 000 means unreadable."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): cannot make a file unreadable")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["check", "fix", "output-dir"])
def test_unreadable_file(tmp_path, mode):
    tree, bad = _tree(tmp_path, "secret.cu", GOOD.encode())
    bad.chmod(0)
    out = tmp_path / "out"
    args = {"check": ["check"], "fix": ["fix"], "output-dir": ["fix", "--output-dir", out]}[mode]
    res = subprocess.run([*_without_read_override(), sys.executable, "-m", "cuda2hip", *args, tree],
                         capture_output=True, text=True)
    bad.chmod(0o644)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"error: {bad.as_posix()}: permission denied (unreadable)" in res.stdout
    assert "1 file error." in res.stdout
    assert bad.read_text() == GOOD  # untouched
    processed = out / "good.cu" if mode == "output-dir" else tree / "good.cu"
    assert processed.read_text() == (GOOD if mode == "check" else GOOD_FIXED)


@pytest.mark.parametrize("mode", [Mode.CHECK, Mode.FIX])
@pytest.mark.parametrize("jobs", [1, 2])
def test_file_vanished_between_discovery_and_processing(tmp_path, monkeypatch, mode, jobs):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(20):  # enough files for the worker pool with 2 jobs
        (tree / f"f{i:02d}.cu").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, jobs=jobs, use_cache=False)
    files, errors = discover(["tree"], settings)
    assert len(files) == 20 and not errors
    (tree / "f07.cu").unlink()
    results = run_files(files, settings, mode, Engine(settings))
    run = RunResult(results, [r.error for r in results if r.error], mode)
    assert [(e.path, e.reason) for e in run.errors] == [
        ("tree/f07.cu", "no such file (removed after discovery)")]
    assert run.files_scanned == 19
    if mode is Mode.FIX:
        assert all((tree / f"f{i:02d}.cu").read_text() == GOOD_FIXED for i in range(20) if i != 7)
        assert not (tree / "f07.cu").exists()  # not recreated


def test_cli_reports_file_errors_in_json(tmp_path):
    name, content, _ = CASES["binary"]
    tree, bad = _tree(tmp_path, name, content)
    res = run_cli("check", "--format", "json", tree)
    assert res.returncode == 2
    assert bad.as_posix() in res.stdout and "binary file" in res.stdout


# -- what "does not parse" means -----------------------------------------------------------------

NOT_C = {
    "markdown.h": MARKDOWN,
    "config.cuh": "name: demo\nversion: 3\nflags:\n  - fast\n  - safe\nowner: nobody\n",
    "script.cu": "import os\n\n\ndef main():\n    for name in os.listdir('.'):\n        print(name)\n\n\nmain()\n",
    "build.h": "all: demo\n\ndemo: demo.o util.o\n\t$(CXX) -o $@ $^\n\nclean:\n\trm -f demo *.o\n",
    "setup.cu": "[project]\nname = \"demo\"\nversion = \"1.0\"\n\n[tool.demo]\nfast = true\n",
    "note.cuh": "see the README for how to build this: it is not code!\n",
}
REAL_C = {
    # `#if` branches that split braces: one ERROR node covers nearly all of the file
    "split_braces.cu": "#if A\nvoid f(int x) {\n#else\nvoid f(long x) {\n#endif\n  g(x);\n  h(x);\n}\n"
                       "int main() { return 0; }\nint k = 1;\n",
    # macro-decorated declarations: errors on every line, covering little of it
    "callbacks.cu": "".join(f"void CUDART_CB cb{i}(cudaStream_t s, cudaError_t e, void* d) {{ int x = {i}; }}\n"
                            for i in range(10)),
    "extern_c.h": '#ifdef __cplusplus\nextern "C" {\n#endif\nint a(void);\nint b(int);\n'
                  '#ifdef __cplusplus\n}\n#endif\n',
    "one_line.cu": "int main( { return 0; }\n",  # broken, but C
}


def _reason(text: str) -> str | None:
    from cuda2hip.lang import parse as parsing

    data = text.encode()
    errors = parsing.error_nodes(parsing.parse("cuda", data), "cuda")
    lines = sorted({data.count(b"\n", 0, e.start_byte) + 1 for e in errors})
    return foreign_text_reason(data, errors, lines)


@pytest.mark.parametrize("name", sorted(NOT_C))
def test_other_languages_do_not_parse(name):
    assert _reason(NOT_C[name]) is not None


@pytest.mark.parametrize("name", sorted(REAL_C))
def test_real_code_with_recoverable_errors_parses(name):
    assert _reason(REAL_C[name]) is None


# Real headers that parse badly: macro-decorated declarations, initializer fragments.
HARD_HEADERS = ("python3.11/", "curses.h", "openssl/core_dispatch.h", "__clang_cuda", "ks_names.h",
                "regerrs.h", "hip/")


@pytest.mark.slow
def test_system_headers_parse():
    """Headers of the machine (with error recovery, macros, fragments) count as C: a sample of
    every 7th plus the hardest ones (bench/README: all 10,330 pass)."""
    headers = [p for p in sorted(Path("/usr/include").rglob("*.h")) if p.is_file()]
    if len(headers) < 100:
        pytest.skip("too few headers in /usr/include to be a meaningful sample")
    headers = [p for i, p in enumerate(headers) if i % 7 == 0 or any(h in str(p) for h in HARD_HEADERS)]
    refused = []
    for path in headers:
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        if _reason(data.decode("utf-8", errors="replace")) is not None:
            refused.append(str(path))
    assert refused == []


# -- Ctrl-C ----------------------------------------------------------------------------------------

def _corpus(tmp_path: Path, lines: int) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import generate
    finally:
        sys.path.pop(0)
    tree = tmp_path / "tree"
    generate(tree, lines, seed=3, file_lines=200)
    return tree


@pytest.mark.integration
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_leaves_no_partial_file(tmp_path, jobs):
    tree = _corpus(tmp_path, 60_000)
    expected = tmp_path / "expected"
    assert run_cli("fix", "--output-dir", expected, tree, cwd=tree).returncode in (0, 1)  # 1: findings remain
    original = {p.relative_to(tree).as_posix(): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    migrated = {p.relative_to(expected).as_posix(): p.read_bytes() for p in expected.rglob("*") if p.is_file()}
    assert sum(original[k] != migrated[k] for k in original) > 100

    # Like a terminal's Ctrl-C: SIGINT to the whole process group, once the run has written.
    # As in a terminal's foreground job, SIGINT has its default action in the process (a test
    # run started in the background of a non-interactive shell inherits it ignored).
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "fix", "--no-cache", "-j", jobs, str(tree)],
                            cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any((tree / k).read_bytes() != v for k, v in original.items() if k.endswith(".cu")):
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)

    assert proc.returncode == 130, (proc.returncode, stdout[-2000:], stderr[-2000:])
    assert "interrupted" in stderr
    assert "Traceback" not in stderr, stderr
    assert not [p for p in tree.rglob("*") if p.name.endswith(".cuda2hip-tmp")]
    now = {p.relative_to(tree).as_posix(): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    assert set(now) == set(original)
    done = [k for k in now if now[k] == migrated[k] != original[k]]
    untouched = [k for k in now if now[k] == original[k] != migrated[k]]
    # Every file is either complete or untouched, and the run really was cut short.
    assert [k for k in now if now[k] not in (original[k], migrated[k])] == []
    assert done and untouched, (len(done), len(untouched))
