"""The result cache never serves a stale or damaged result: the key covers the local headers a
result read (transitively), every value carries a checksum, a cached fixed text is written only
if the cached edits re-applied to the file give it, and a cache directory others can write is
not used at all."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from conftest import run_cli

USES = '#include "defs.h"\nvoid f(float* p) { CUDA_CHECK_MINE(cudaFree(p)); }\n'
DEFS = '#pragma once\n#include <cuda_runtime.h>\n#define CUDA_CHECK_MINE(x) (x)\n'
DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"
FIXED = "#include <hip/hip_runtime.h>\nvoid f(float* p) { hipFree(p); }\n"


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "project"
    p.mkdir()
    return p


def _env(tmp_path) -> dict:
    return {"CUDA2HIP_CACHE_DIR": str(tmp_path / "cache")}


def _codes(r) -> list[str]:
    # HIP005 (defs.h, which fix would change, is left out of the run) is about the run's scope,
    # not about main.cu's result.
    codes = (line.split(": ")[1].split()[0] for line in r.stdout.splitlines() if ": HIP" in line)
    return sorted(c for c in codes if c != "HIP005")


def _check(project, tmp_path, *args):
    return run_cli("check", "--format", "concise", *args, "main.cu", cwd=project, env=_env(tmp_path))


# --- item 2: headers -----------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [1, 2])
def test_a_changed_header_gives_fresh_results(project, tmp_path, depth):
    # main.cu -> defs.h (-> inner.h): the header defines the project's macro and includes the
    # runtime, so main.cu has neither HIP190 nor HIP121 ...
    (project / "main.cu").write_text(USES)
    if depth == 1:
        defs = project / "defs.h"
    else:
        (project / "defs.h").write_text('#pragma once\n#include "inner.h"\n')
        defs = project / "inner.h"
    defs.write_text(DEFS)
    assert _codes(_check(project, tmp_path)) == ["HIP101"]
    assert _codes(_check(project, tmp_path)) == ["HIP101"]  # served by the cache
    # ... until the header drops both: the cached result of main.cu is stale.
    defs.write_text("#pragma once\n")
    fresh = _codes(_check(project, tmp_path, "--no-cache"))
    assert fresh == ["HIP101", "HIP121", "HIP190"]
    assert _codes(_check(project, tmp_path)) == fresh
    # fix uses the header as it is now: the runtime include is added.
    r = run_cli("fix", "--diff", "main.cu", cwd=project, env=_env(tmp_path))
    assert "+#include <hip/hip_runtime.h>\n" in r.stdout, r.stdout


def test_a_header_that_appears_later_gives_fresh_results(project, tmp_path):
    (project / "main.cu").write_text(USES)  # defs.h does not exist yet
    assert "HIP190" in _codes(_check(project, tmp_path))
    (project / "defs.h").write_text(DEFS)
    assert _codes(_check(project, tmp_path)) == ["HIP101"]


def test_unchanged_headers_keep_the_cache(project, tmp_path):
    (project / "main.cu").write_text(USES)
    (project / "defs.h").write_text(DEFS)
    _check(project, tmp_path)
    os.utime(project / "defs.h")  # touched, same content
    r = _check(project, tmp_path, "--verbose")
    assert "cache: 1 hit" in r.stderr, r.stderr


# --- item 3: damaged and forged entries ------------------------------------------------------

def _db(tmp_path) -> Path:
    (db,) = (tmp_path / "cache").glob("store-*.sqlite3")
    return db


def _edit_values(tmp_path, change) -> int:
    """Apply `change` to the stored results (the sealed values of the store)."""
    from cuda2hip.run.cached import unseal

    con = sqlite3.connect(_db(tmp_path))
    rows = con.execute("SELECT key, value FROM store").fetchall()
    changed = 0
    for key, value in rows:
        if unseal(bytes(value)) is None:
            continue  # rule data
        new = change(bytes(value))
        if new != value:
            con.execute("UPDATE store SET value = ? WHERE key = ?", (new, key))
            changed += 1
    con.commit()
    con.close()
    return changed


def test_a_flipped_bit_in_a_cached_value_is_a_miss(project, tmp_path):
    (project / "main.cu").write_text(DIRTY)
    assert run_cli("fix", "--diff", "main.cu", cwd=project, env=_env(tmp_path)).returncode == 1
    for verbose in ([], ["--verbose"]):
        assert _edit_values(tmp_path, lambda v: v.replace(b"hipFree(", b"hipfree(")) == 1
        r = run_cli("fix", *verbose, "main.cu", cwd=project, env=_env(tmp_path))
        assert r.returncode == 0, r.stdout + r.stderr
        assert (project / "main.cu").read_text() == FIXED
        (project / "main.cu").write_text(DIRTY)  # the same content again: the same cache entry
    assert "failed its checksum" in r.stderr, r.stderr


def test_a_fixed_text_the_edits_do_not_give_is_never_written(project, tmp_path):
    # A value whose checksum is right but whose fixed text is not the file with the cached edits
    # applied (as a bug, or an entry made for other content, would give): recomputed.
    from cuda2hip.run import cached as result_cache

    (project / "main.cu").write_text(DIRTY)
    assert run_cli("fix", "--diff", "main.cu", cwd=project, env=_env(tmp_path)).returncode == 1

    def forge(value: bytes) -> bytes:
        entry = result_cache.decode_entry(result_cache.unseal(value))
        entry.migrated = entry.migrated.replace(b"hipFree(p);", b"hipFree(p); system(\"rm -rf ~\");")
        return result_cache.seal(result_cache.encode_entry(entry, "main.cu"))

    for verbose in ([], ["--verbose"]):
        assert _edit_values(tmp_path, forge) == 1
        r = run_cli("fix", *verbose, "main.cu", cwd=project, env=_env(tmp_path))
        assert r.returncode == 0, r.stdout + r.stderr
        assert (project / "main.cu").read_text() == FIXED
        (project / "main.cu").write_text(DIRTY)
    assert "re-applied" in r.stderr, r.stderr


# --- the trust model: a cache directory others can write is not used -------------------------

@pytest.mark.parametrize("how", ["world-writable", "group-writable", "other-owner"])
def test_a_cache_directory_others_can_write_is_refused(project, tmp_path, how):
    cache = tmp_path / "cache"
    cache.mkdir()
    if how == "other-owner":
        if os.geteuid() != 0:
            pytest.skip("giving a directory to another user needs root")
        os.chown(cache, 65534, 65534)
        os.chmod(cache, 0o755)
    else:
        os.chmod(cache, 0o777 if how == "world-writable" else 0o775)
    (project / "main.cu").write_text(DIRTY)
    r = run_cli("fix", "main.cu", cwd=project, env=_env(tmp_path))
    assert r.returncode == 0 and (project / "main.cu").read_text() == FIXED, r.stdout + r.stderr
    assert "not using the cache directory" in r.stderr and str(cache) in r.stderr, r.stderr
    assert list(cache.iterdir()) == []  # nothing read from it, nothing written to it


def test_the_cache_directory_is_created_private(project, tmp_path):
    (project / "main.cu").write_text(DIRTY)
    run_cli("check", "main.cu", cwd=project, env={"CUDA2HIP_CACHE_DIR": str(tmp_path / "new" / "cache")})
    mode = stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode)
    assert mode & 0o077 == 0, oct(mode)


# --- the store is private, leaves nothing half-written, and follows the parsers (issue 32) ---------

def test_everything_the_cache_directory_holds_is_private(project, tmp_path):
    """The results database was created with the umask (0644 here): other users could read the
    cached texts of the files a user checked."""
    (project / "main.cu").write_text(DIRTY)
    (project / "k.py").write_text("import cupy\nk = cupy.RawKernel(r'''__global__ void k() {}''', 'k')\n")
    (project / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\n")
    cache = tmp_path / "cache"
    for args in (["check"], ["fix", "--diff"], ["check"]):
        r = run_cli(*args, "main.cu", "k.py", "CMakeLists.txt", cwd=project, env=_env(tmp_path))
        assert r.returncode == 1, r.stdout + r.stderr
    found = [cache, *cache.rglob("*")]
    assert len(found) > 1
    for p in found:
        mode = stat.S_IMODE(p.lstat().st_mode)
        assert mode & 0o077 == 0, (p, oct(mode))


def test_a_full_disk_leaves_no_temporary_files_in_the_cache(project, tmp_path):
    """A write of the rule data that failed (disk full) left its temporary file behind, on every
    run. The file size limit stands for the full disk: writes past 64 KB fail (EFBIG)."""
    import resource
    import signal
    import subprocess
    import sys

    from conftest import ROOT

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    (project / "main.cu").write_text(DIRTY)
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "cuda2hip", "check", "--format", "concise", "main.cu"], cwd=project,
                           capture_output=True, text=True, preexec_fn=small_files,
                           env={**os.environ, "PYTHONPATH": str(ROOT), **_env(tmp_path)})
        assert r.returncode == 1 and "HIP101" in r.stdout and "Traceback" not in r.stderr, r.stdout + r.stderr
    left = [p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert not [n for n in left if n.startswith(".") or "tmp" in n], left


def _site_with_copies(tmp_path, modules) -> Path:
    """A folder ahead on the import path holding copies of installed packages (and their
    dist-info), which the test can then 'upgrade'."""
    import importlib.util

    site = tmp_path / "site"
    site.mkdir()
    for module in modules:
        spec = importlib.util.find_spec(module)
        package = Path(spec.origin).parent
        import shutil

        shutil.copytree(package, site / package.name)
        info = next(package.parent.glob(f"{module}-*.dist-info"))
        shutil.copytree(info, site / info.name)
    return site


@pytest.mark.parametrize("module, name, text", [
    ("tree_sitter_make", "Makefile", "all:\n\tnvcc -o k k.cu -lcudart\n"),
    ("tree_sitter_cmake", "CMakeLists.txt", "project(p LANGUAGES CXX CUDA)\n"),
    ("libcst", "k.py", "import cupy\nk = cupy.RawKernel(r'''__global__ void k() { cudaDeviceSynchronize(); }''', 'k')\n"),
    ("tree_sitter_cuda", "main.cu", DIRTY)])
def test_a_parser_upgrade_gives_fresh_results(project, tmp_path, module, name, text, process):
    """Results were keyed by tree-sitter and tree-sitter-cuda only: after an upgrade of the
    CMake, Make or Python parser, the results of the old one were served. (A process: the
    parsers are imported from another site.)"""
    from conftest import ROOT

    site = _site_with_copies(tmp_path, [module])
    (project / name).write_text(text)
    env = {**_env(tmp_path), "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}

    def hits() -> str:
        r = process("check", "--verbose", "--format", "concise", name, cwd=project, env=env)
        assert r.returncode == 1, r.stdout + r.stderr
        return next(line for line in r.stderr.splitlines() if " hit" in line)

    hits()
    assert hits().startswith("cuda2hip: cache: 1 hit"), hits()
    info = next(site.glob(f"{module}-*.dist-info"))
    info.rename(site / info.name.replace("-", "-99.", 1))  # a new version of the parser
    assert hits().startswith("cuda2hip: cache: 0 hits"), hits()
