"""`fix` reads and writes each file where the walk found it: a directory or a file swapped for a
link (or for a FIFO, a device) after the walk is refused, never followed; a link inside the tree
never leads a write into `.git` or an excluded folder; a file rewritten in place keeps its
extended attributes and POSIX ACLs (the ACL mask included)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from cuda2hip.engine.engine import Engine
from cuda2hip.pipeline import Mode, run
from cuda2hip.run import files as one_file
from cuda2hip.run import workers
from cuda2hip.settings import Settings

DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"
FIXED = "#include <hip/hip_runtime.h>\nvoid f(float* p) { hipFree(p); }\n"


def _temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".cuda2hip-tmp")]


def _tree(tmp_path: Path, n: int) -> Path:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    for i in range(n):
        (tree / f"f{i:02d}.cu").write_text(DIRTY)
    (tree / "sub" / "a.cu").write_text(DIRTY)
    return tree


def _run_with(tmp_path, monkeypatch, jobs, when, what) -> tuple:
    """Fix the tree, doing `what()` once `when` (an item's name, 'read' or 'write') comes."""
    real = one_file.analyse if when == "write" else workers.process_one
    done = []

    if when == "write":
        def spy(source, item, mode, settings, engine):
            entry = real(source, item, mode, settings, engine)
            if item.path.name == "a.cu" and mode is Mode.FIX and not done:
                done.append(what())
            return entry
        monkeypatch.setattr(one_file, "analyse", spy)
    else:
        def spy(item, mode, settings, engine, plan=None, *rest):
            if item.path.name == "a.cu" and mode is Mode.FIX and not done:
                done.append(what())
            return real(item, mode, settings, engine, plan, *rest)
        monkeypatch.setattr(workers, "process_one", spy)
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, jobs=jobs, use_cache=False)
    return run(["tree"], settings, Mode.FIX, Engine(settings)), done


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("when", ["read", "write"])
def test_a_folder_swapped_for_a_link_after_the_walk_is_not_followed(tmp_path, monkeypatch, jobs, when):
    tree = _tree(tmp_path, 20)  # 20 files: with 2 jobs the worker pool runs (forked: the spy too)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.cu").write_text(DIRTY)

    def swap():
        os.rename(tree / "sub", tree / "sub.walked")
        os.symlink(outside, tree / "sub")

    result, _ = _run_with(tmp_path, monkeypatch, jobs, when, swap)
    assert (outside / "a.cu").read_text() == DIRTY
    assert (tree / "sub.walked" / "a.cu").read_text() == DIRTY
    assert [e.path for e in result.errors] == ["tree/sub/a.cu"], result.errors
    assert all((tree / f"f{i:02d}.cu").read_text() == FIXED for i in range(20))
    assert not _temp_files(tmp_path)


@pytest.mark.parametrize("when", ["read", "write"])
def test_a_file_swapped_for_a_link_after_the_walk_is_not_followed(tmp_path, monkeypatch, when):
    tree = _tree(tmp_path, 0)
    outside = tmp_path / "outside.cu"
    outside.write_text(DIRTY)

    def swap():
        os.unlink(tree / "sub" / "a.cu")
        os.symlink(outside, tree / "sub" / "a.cu")

    result, _ = _run_with(tmp_path, monkeypatch, 1, when, swap)
    assert outside.read_text() == DIRTY and (tree / "sub" / "a.cu").is_symlink()
    assert [e.path for e in result.errors] == ["tree/sub/a.cu"], result.errors
    assert not _temp_files(tmp_path)


@pytest.mark.parametrize("mode", [Mode.CHECK, Mode.FIX])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "device"])
def test_a_file_that_became_a_fifo_or_a_device_after_the_walk_is_skipped(tmp_path, monkeypatch, kind, mode):
    """Read as it was named, a FIFO hung the run and a link to /dev/zero filled the memory."""
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    tree = _tree(tmp_path, 3)
    victim = tree / "sub" / "a.cu"

    def replace():
        victim.unlink()
        if kind == "fifo":
            os.mkfifo(victim)
        elif kind == "dev-zero":
            os.symlink("/dev/zero", victim)
        else:
            os.mknod(victim, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # what /dev/zero is

    real = workers.process_one
    done = []

    def spy(item, m, settings, engine, plan=None, *rest):
        if item.path.name == "a.cu" and not done:
            done.append(replace())
        return real(item, m, settings, engine, plan, *rest)

    monkeypatch.setattr(workers, "process_one", spy)
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, jobs=1, use_cache=False)

    def hung(*_):
        raise TimeoutError("the run hung on the FIFO")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        result = run(["tree"], settings, mode, Engine(settings))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert done
    (error,) = result.errors
    assert error.path == "tree/sub/a.cu" and ("not a regular file" in error.reason or "link" in error.reason), error
    assert all((tree / f"f{i:02d}.cu").read_text() == (FIXED if mode is Mode.FIX else DIRTY) for i in range(3))


def _git_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / ".git" / "hooks").mkdir(parents=True)
    (tree / ".git" / "hooks" / "x.cu").write_text(DIRTY)
    (tree / "vendor").mkdir()
    (tree / "vendor" / "v.cu").write_text(DIRTY)
    (tree / "own.cu").write_text(DIRTY)
    (tree / "to-git.cu").symlink_to(".git/hooks/x.cu")
    (tree / "to-vendor.cu").symlink_to("vendor/v.cu")
    (tree / "git-dir").symlink_to(".git/hooks")
    (tree / "cuda2hip.toml").write_text('exclude = ["vendor/"]\n')
    return tree


@pytest.mark.parametrize("args", [["fix", "."], ["fix", "-j", "2", "."], ["fix", "--follow-includes", "own.cu"],
                                  ["fix", "to-git.cu"], ["fix", "to-vendor.cu"], ["fix", "git-dir/x.cu"],
                                  ["fix", ".git/hooks/x.cu"], ["fix", "--rename", "."]],
                         ids=" ".join)
def test_links_never_lead_a_write_into_git_or_an_excluded_folder(tmp_path, args):
    tree = _git_tree(tmp_path)
    if "--follow-includes" in args:
        (tree / "own.cu").write_text('#include "to-git.cu"\n#include "vendor/v.cu"\n' + DIRTY)
    r = run_cli(*args, cwd=tree)
    assert (tree / ".git" / "hooks" / "x.cu").read_text() == DIRTY, r.stdout + r.stderr
    assert (tree / "vendor" / "v.cu").read_text() == DIRTY, r.stdout + r.stderr
    assert (tree / "to-git.cu").is_symlink() and (tree / "to-vendor.cu").is_symlink()
    assert "Traceback" not in r.stderr
    if args[-1] == "." and "--rename" not in args:
        assert (tree / "own.cu").read_text() == FIXED
    if "--follow-includes" in args:  # the headers it cannot take are not offered to `fix` either
        assert (tree / "own.cu").read_text().endswith(FIXED) and "HIP005" not in r.stdout, r.stdout
    elif args[-1] != ".":
        assert r.returncode == 2 and ("excluded" in r.stdout or ".git" in r.stdout), r.stdout + r.stderr


# --- extended attributes and ACLs ----------------------------------------------------------------

def _xattrs_supported(path: Path) -> bool:
    try:
        os.setxattr(path, "user.cuda2hip-test", b"1")
        os.removexattr(path, "user.cuda2hip-test")
        return True
    except OSError:
        return False


def test_an_in_place_fix_keeps_extended_attributes(tmp_path):
    f = tmp_path / "a.cu"
    f.write_text(DIRTY)
    if not hasattr(os, "setxattr") or not _xattrs_supported(f):
        pytest.skip(f"the file system of {tmp_path} has no user extended attributes")
    os.setxattr(f, "user.origin", b"vendor drop 2024-05")
    os.setxattr(f, "user.checksum", b"\x00\x01binary")
    r = run_cli("fix", "a.cu", cwd=tmp_path)
    assert r.returncode == 0 and f.read_text() == FIXED, r.stdout + r.stderr
    assert os.getxattr(f, "user.origin") == b"vendor drop 2024-05"
    assert os.getxattr(f, "user.checksum") == b"\x00\x01binary"


def test_an_in_place_fix_keeps_posix_acls_and_their_mask(tmp_path):
    if shutil.which("setfacl") is None or shutil.which("getfacl") is None:
        pytest.skip("setfacl/getfacl not installed (apt-get install acl)")
    f = tmp_path / "a.cu"
    f.write_text(DIRTY)
    os.chmod(f, 0o640)
    grant = subprocess.run(["setfacl", "-m", "u:nobody:rw,g:nogroup:r,m::r", str(f)], capture_output=True, text=True)
    if grant.returncode != 0:
        pytest.skip(f"the file system of {tmp_path} has no POSIX ACLs: {grant.stderr.strip()}")
    before = subprocess.run(["getfacl", "--omit-header", "--numeric", str(f)], capture_output=True, text=True).stdout
    assert "mask::r--" in before and "user:65534:rw-" in before
    r = run_cli("fix", "a.cu", cwd=tmp_path)
    assert r.returncode == 0 and f.read_text() == FIXED, r.stdout + r.stderr
    after = subprocess.run(["getfacl", "--omit-header", "--numeric", str(f)], capture_output=True, text=True).stdout
    assert after == before
