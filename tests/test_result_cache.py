"""The result cache: unchanged files are not analysed again; any change to the file, the rules,
the settings that decide results, or the kind of run gives a fresh analysis."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from cuda2hip.engine.engine import Engine
from cuda2hip.pipeline import Mode, run
from cuda2hip.run import files as runner
from cuda2hip.settings import Settings

GOOD = "#include <cuda_runtime.h>\nvoid g(float* p) { cudaFree(p); }\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    t = tmp_path / "tree"
    t.mkdir()
    for i in range(5):
        (t / f"f{i}.cu").write_text(GOOD.replace("g(", f"g{i}("))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    return t


@pytest.fixture
def analysed(monkeypatch):
    """Paths of the files the engine really analyses (the cache serves the others)."""
    seen: list[str] = []
    real = runner.analyse

    def spy(source, item, mode, settings, engine):
        seen.append(item.path.as_posix())
        return real(source, item, mode, settings, engine)

    monkeypatch.setattr(runner, "analyse", spy)
    return seen


def _check(settings=None, mode=Mode.CHECK):
    settings = settings or Settings(root=Path.cwd(), jobs=1)
    return run(["tree"], settings, mode, Engine(settings))


def _findings(result):
    return [f.to_dict() for f in result.findings]


def test_unchanged_files_come_from_the_cache(tree, analysed):
    first = _check()
    assert len(analysed) == 5
    analysed.clear()
    second = _check()
    assert analysed == []
    assert _findings(second) == _findings(first) and len(first.findings) == 10  # include + call
    (tree / "f3.cu").write_text("void h() { cudaDeviceSynchronize(); }\n")
    third = _check()
    assert analysed == ["tree/f3.cu"]
    assert "cudaDeviceSynchronize" in " ".join(f.message for f in third.findings)


def test_no_cache(tree, analysed):
    settings = Settings(root=Path.cwd(), jobs=1, use_cache=False)
    _check(settings)
    _check(settings)
    assert len(analysed) == 10
    # No results are stored (the rule caches, keyed by the rule files' content, may be:
    # tests/test_deferred_rules.py).
    assert not list((tree.parent / "cache").glob("results*"))


@pytest.mark.parametrize("change", ["ignore", "target", "unsafe", "mode"])
def test_results_depend_on_settings_and_mode(tree, analysed, change):
    _check()
    analysed.clear()
    settings = Settings(root=Path.cwd(), jobs=1)
    mode = Mode.CHECK
    if change == "ignore":
        settings.ignore = ("HIP100", "HIP101")
    elif change == "target":
        settings.target_rocm = "5.2"
    elif change == "unsafe":
        settings.unsafe_fixes = True
        mode = Mode.PREVIEW
    else:
        mode = Mode.PREVIEW  # fix results (what remains, the fixed text) are not check results
    result = _check(settings, mode)
    assert len(analysed) == 5
    if change == "ignore":
        assert not result.findings
    analysed.clear()
    again = _check(settings, mode)  # and those results are cached in turn
    assert analysed == []
    assert _findings(again) == _findings(result)
    if mode is Mode.PREVIEW:
        assert [r.migrated for r in again.files] == [r.migrated for r in result.files]
        assert all(r.migrated and b"hipFree" in r.migrated for r in again.files)


def test_neutral_settings_keep_the_cache(tree, analysed):
    _check()
    analysed.clear()
    _check(Settings(root=Path.cwd(), jobs=2, fail_on="error", show_suppressed=True))
    assert analysed == []


def test_a_changed_rule_file_invalidates(tree, analysed, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    shutil.copy(ROOT / "rules" / "api" / "cuda-runtime-api.yaml", rules / "mine.yaml")
    text = (rules / "mine.yaml").read_text()
    text = text.replace("code: HIP101", "code: HIP901").replace("id: cuda-runtime-api", "id: my-renames")
    text = text.replace("tables:\n  - data/runtime.json\n", "names:\n  cudaFree: hipFree\n")
    (rules / "mine.yaml").write_text(text)
    settings = Settings(root=Path.cwd(), jobs=1, rule_dirs=(rules,), select=("HIP901",))
    first = _check(settings)
    assert {f.code for f in first.findings} == {"HIP901"}
    analysed.clear()
    _check(settings)
    assert analysed == []
    (rules / "mine.yaml").write_text(text.replace("cudaFree: hipFree", "cudaFree: hipFreeX"))
    st = (rules / "mine.yaml").stat()
    os.utime(rules / "mine.yaml", ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    third = _check(settings)
    assert len(analysed) == 5
    assert "hipFreeX" in third.findings[0].message


def test_a_corrupt_cache_only_costs_speed(tree, analysed, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    from cuda2hip.cache.store import DB_NAME

    (cache / DB_NAME).write_bytes(b"this is not a database" * 100)
    first = _check()
    assert len(analysed) == 5 and len(first.findings) == 10
    analysed.clear()
    second = _check()  # the store was started afresh and works again
    assert analysed == []
    assert _findings(first) == _findings(second)


def test_cached_fix_output_tree(tree, tmp_path):
    out = tmp_path / "out"
    first = run_cli("fix", "--output-dir", out, "tree", cwd=tmp_path)
    shutil.rmtree(out)
    second = run_cli("fix", "--output-dir", out, "tree", cwd=tmp_path)  # every result cached
    assert first.stdout == second.stdout and first.returncode == second.returncode == 0
    assert (out / "f1.cu").read_text() == "#include <hip/hip_runtime.h>\nvoid g1(float* p) { hipFree(p); }\n"
    assert (tree / "f1.cu").read_text() == GOOD.replace("g(", "g1(")


# -- progress bar --------------------------------------------------------------------------------

def _run_with_tty_stderr(args, cwd) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="100")
    env.pop("CUDA2HIP_NO_PROGRESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    stdout = proc.stdout.read().decode()
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, stdout, b"".join(chunks).decode(errors="replace")


def test_progress_bar_on_a_terminal_only(tmp_path):
    big = tmp_path / "big"
    big.mkdir()
    for i in range(120):
        (big / f"f{i:03d}.cu").write_text(GOOD)
    code, stdout, tty = _run_with_tty_stderr(["check", "--no-cache", "big"], tmp_path)
    assert code == 1
    assert "checking" in tty and "120" in tty  # rich's bar: description and file counts
    assert "checking" not in stdout  # the report stays clean
    piped = run_cli("check", "--no-cache", "big", cwd=tmp_path)
    assert piped.stderr == ""  # not a terminal: quiet
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.cu").write_text(GOOD)
    code, _, tty = _run_with_tty_stderr(["check", "--no-cache", "small"], tmp_path)
    assert "checking" not in tty  # a short run shows no bar


def test_fixed_findings_from_a_worker_are_decoded_when_read():
    import msgspec

    from cuda2hip.findings import Edit, Finding, Fix, Applicability, Severity
    from cuda2hip.findings import count_encoded
    from cuda2hip.run.cached import Entry, decode_entry_head, encode_entry
    from cuda2hip.results import FileResult

    for n in (0, 1, 15, 16, 300, 70000):
        assert count_encoded(msgspec.msgpack.encode(list(range(n)))) == n
    fixed = [Finding(code="HIP101", rule_id="r", severity=Severity.WARNING, path="a.cu", start=i, end=i + 4,
                     line=1, column=i + 1, end_line=1, end_column=i + 5, message="m",
                     fix=Fix(Applicability.SAFE, (Edit(i, i + 4, "hip"),)), extra={"k": i})
             for i in range(20)]
    head = decode_entry_head(encode_entry(Entry([], fixed, b"new"), "a.cu"))
    assert head.migrated == b"new" and head.findings == []
    result = FileResult(path="a.cu", language="cuda")
    result.set_encoded_fixed(bytes(head.fixed))
    assert result.fixed_count == 20
    assert result.fixed == fixed and result.fixed_count == 20
    result.fixed = fixed[:3]
    assert result.fixed_count == 3 and result.fixed == fixed[:3]
    assert FileResult(path="b.cu", language="cuda", fixed=fixed).fixed_count == 20


def test_a_header_edited_between_two_runs_of_one_process_counts(tree, analysed):
    """A run keeps the digests of the headers its look-ups read (its file cache and its header
    report share them); the next run, in the same process, reads them again."""
    (tree / "k.cuh").write_text("#pragma once\ninline int cudaMyHelper() { return 1; }\n")
    (tree / "f0.cu").write_text('#include "k.cuh"\nint use() { return cudaMyHelper(); }\n')

    def helper_unknown_in_f0(result) -> bool:
        return any("cudaMyHelper" in f.message for f in result.findings if f.path.endswith("f0.cu"))

    assert not helper_unknown_in_f0(_check())
    assert not helper_unknown_in_f0(_check())  # from the cache: the header's digest was read
    analysed.clear()
    (tree / "k.cuh").write_text("#pragma once\n// the helper moved away\n")
    second = _check()
    assert "tree/f0.cu" in analysed  # its header changed: not the cached result
    assert helper_unknown_in_f0(second)


def test_headers_left_out_are_judged_from_their_cached_fix_results(tree, analysed):
    """A check of one file reports the local header that fix would change (HIP005) from the
    header's cached fix result when it holds, analysing the header only when it does not:
    after the header's own edit, or after an edit of a header it includes."""
    (tree / "inner.cuh").write_text("#pragma once\n#define INNER 1\n")
    (tree / "k.cuh").write_text('#pragma once\n#include "inner.cuh"\n#include <cuda_runtime.h>\n'
                                "inline void release(float* p) { cudaFree(p); }\n")
    (tree / "f0.cu").write_text('#include "k.cuh"\nvoid use(float* p) { release(p); }\n')
    settings = Settings(root=Path.cwd(), jobs=1)

    def hip005(edit: str = "") -> list[str]:
        if edit:
            (tree / "f0.cu").write_text((tree / "f0.cu").read_text() + edit)
        result = run(["tree/f0.cu"], settings, Mode.CHECK, Engine(settings))
        return [f.message for f in result.findings if f.code == "HIP005"]

    assert len(hip005()) == 1 and "tree/k.cuh" in analysed  # analysed: nothing cached yet
    analysed.clear()
    assert len(hip005("// edited\n")) == 1 and analysed == ["tree/f0.cu"]  # k.cuh: its cached result
    (tree / "k.cuh").write_text('#pragma once\n#include "inner.cuh"\ninline void release(float*) {}\n')
    analysed.clear()
    assert hip005("// edited again\n") == [] and "tree/k.cuh" in analysed  # its edit: analysed again
    analysed.clear()
    assert hip005("// a third time\n") == [] and analysed == ["tree/f0.cu"]
    (tree / "inner.cuh").write_text("#pragma once\n#define INNER 2\n")
    analysed.clear()
    assert hip005("// a fourth time\n") == [] and "tree/k.cuh" in analysed  # what it includes changed


def test_the_caches_of_one_check_share_one_database_connection(tree, monkeypatch):
    """A one-file check looks up its file in the check cache and its headers in the fix cache,
    and reads its rule data: one connection to the one store serves all (each open costs a
    connect and its PRAGMAs). Both caches' results land: a second run is served by them."""
    import sqlite3

    from cuda2hip.cache import store
    from cuda2hip.run.cached import unseal

    (tree / "k.cuh").write_text("#pragma once\n#include <cuda_runtime.h>\ninline void r(float* p) { cudaFree(p); }\n")
    (tree / "f0.cu").write_text('#include "k.cuh"\nvoid use(float* p) { r(p); }\n')
    opened = []
    real_connect = sqlite3.connect

    def counting_connect(*args, **kwargs):
        db = real_connect(*args, **kwargs)
        opened.append(db)
        return db

    monkeypatch.setattr(sqlite3, "connect", counting_connect)
    monkeypatch.setattr(store, "_STORE", None)
    settings = Settings(root=Path.cwd(), jobs=1)
    first = run(["tree/f0.cu"], settings, Mode.CHECK, Engine(settings))
    again = run(["tree/f0.cu"], settings, Mode.CHECK, Engine(settings))
    assert len(opened) == 1
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in first.findings]
    assert any(f.code == "HIP005" for f in again.findings)
    db = real_connect(tree.parent / "cache" / store.DB_NAME)
    results = sum(unseal(bytes(v)) is not None for (v,) in db.execute("SELECT value FROM store"))
    db.close()
    assert results >= 2  # the file's check result and the header's fix result


def test_a_check_reads_a_header_its_files_share_once(tree, monkeypatch):
    """Five files include the same header (which includes another): a check reads each header
    once for the whole run, not for each file and each analysis that follows includes; a fix
    (which may rewrite a header mid-run) reads them as it goes. The findings are the same."""
    from cuda2hip.lang.cxx import includes as include_graph

    (tree / "inner.cuh").write_text("#pragma once\n#define INNER 1\n")
    (tree / "k.cuh").write_text('#pragma once\n#include "inner.cuh"\n#include <cuda_runtime.h>\n'
                                "inline void release(float* p) { cudaFree(p); }\n")
    for i in range(5):
        (tree / f"f{i}.cu").write_text(f'#include "k.cuh"\nvoid use{i}(float* p) {{ release(p); }}\n')
    reads: list[str] = []
    real = include_graph._read_now
    monkeypatch.setattr(include_graph, "_read_now", lambda path: reads.append(os.path.basename(path)) or real(path))
    settings = Settings(root=Path.cwd(), jobs=1, use_cache=False)
    files = [f"tree/f{i}.cu" for i in range(5)]
    checked = run(files, settings, Mode.CHECK, Engine(settings))
    assert sorted(reads) == ["inner.cuh", "k.cuh"]
    assert sum(f.code == "HIP005" for f in checked.findings) == 5
    reads.clear()
    fixed = run(files, settings, Mode.FIX, Engine(settings))
    assert reads.count("k.cuh") > 1  # no memo where files are rewritten
    assert include_graph._RUN_READS is None and include_graph._RUN_HEADERS is None
    assert fixed.findings
