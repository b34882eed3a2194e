"""Nothing lost when files are written: owners and hard links, edits saved while `fix` runs,
report paths that cannot be written, what a killed run leaves, symlinks named on the command
line, file names that hold line breaks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from cuda2hip.engine.engine import Engine
from cuda2hip.pipeline import Mode, run
from cuda2hip.run import files as runner
from cuda2hip.settings import Settings

DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"
FIXED = "#include <hip/hip_runtime.h>\nvoid f(float* p) { hipFree(p); }\n"


def _temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".cuda2hip-tmp")]


# --- ownership and hard links (item 4) ------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_in_place_fix_as_root_keeps_owner_group_and_mode(tmp_path):
    f = tmp_path / "a.cu"
    f.write_text(DIRTY)
    os.chown(f, 65534, 65534)  # nobody:nogroup
    os.chmod(f, 0o640)
    r = run_cli("fix", "a.cu", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    st = f.stat()
    assert f.read_text() == FIXED
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_hard_linked_file_is_refused_not_split(tmp_path, where):
    # Replacing one name of a hard-linked file by a new file leaves the other names with the old
    # content: the link is silently split. Refused instead, with the reason.
    project = tmp_path / "project"
    project.mkdir()
    f = project / "a.cu"
    f.write_text(DIRTY)
    other = (tmp_path if where == "outside" else project) / "b.cu"
    os.link(f, other)
    r = run_cli("fix", ".", cwd=project)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "hard link" in r.stdout and "a.cu" in r.stdout, r.stdout
    assert f.read_text() == DIRTY and other.read_text() == DIRTY
    assert os.stat(f).st_ino == os.stat(other).st_ino and not _temp_files(tmp_path)


# --- an edit saved while fix runs (item 5) ---------------------------------------------------

def _tree(tmp_path, count: int) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(count):
        (tree / f"f{i:02d}.cu").write_text(DIRTY)
    return tree


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edit_saved_while_fix_works_on_the_file_is_kept(tmp_path, monkeypatch, jobs):
    tree = _tree(tmp_path, 20)  # 20 files: with 2 jobs the worker pool runs (forked: the spy too)
    victim = tree / "f07.cu"
    real = runner.analyse

    def analyse_then_edit(source, item, mode, settings, engine):
        entry = real(source, item, mode, settings, engine)
        if item.path.name == victim.name and mode is Mode.FIX:  # the user saves an edit meanwhile
            with open(victim, "a") as fh:
                fh.write("// saved by the user\n")
        return entry

    monkeypatch.setattr(runner, "analyse", analyse_then_edit)
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, jobs=jobs, use_cache=False)
    result = run(["tree"], settings, Mode.FIX, Engine(settings))
    assert [(e.path, e.reason) for e in result.errors] == [
        ("tree/f07.cu", "changed on disk while cuda2hip worked on it; left untouched (run it again)")]
    assert victim.read_text() == DIRTY + "// saved by the user\n"
    assert all((tree / f"f{i:02d}.cu").read_text() == FIXED for i in range(20) if i != 7)
    assert not _temp_files(tree)


def test_an_edit_saved_after_a_cache_hit_is_kept(tmp_path, monkeypatch):
    from cuda2hip.run.cached import ResultCache

    tree = _tree(tmp_path, 1)
    victim = tree / "f00.cu"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings(root=tmp_path, jobs=1)
    run(["tree"], settings, Mode.PREVIEW, Engine(settings))  # `fix --diff` fills the cache
    real_get = ResultCache.get

    def get_then_edit(self, key):
        entry = real_get(self, key)
        with open(victim, "a") as fh:
            fh.write("// saved by the user\n")
        return entry

    monkeypatch.setattr(ResultCache, "get", get_then_edit)
    result = run(["tree"], settings, Mode.FIX, Engine(settings))  # served by the cache
    assert [e.reason for e in result.errors] == [
        "changed on disk while cuda2hip worked on it; left untouched (run it again)"]
    assert victim.read_text() == DIRTY + "// saved by the user\n"


# --- report paths (item 6) --------------------------------------------------------------------

@pytest.mark.parametrize("option", ["-o", "--report"])
def test_unwritable_report_path_fails_before_any_source_is_touched(tmp_path, option):
    (tmp_path / "a.cu").write_text(DIRTY)
    (tmp_path / "plain-file").write_text("")
    for target in ("plain-file/report.html", "a-directory"):
        (tmp_path / "a-directory").mkdir(exist_ok=True)
        r = run_cli("fix", option, target, "a.cu", cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and target in r.stderr, r.stderr
        assert (tmp_path / "a.cu").read_text() == DIRTY


@pytest.mark.parametrize("command", ["check", "fix"])
def test_report_parent_outside_the_working_tree_is_not_created(tmp_path, command):
    missing = Path(f"/nonexistent-cuda2hip-{uuid.uuid4().hex}")
    (tmp_path / "a.cu").write_text(DIRTY)
    try:
        r = run_cli(command, "-o", missing / "report.txt", "a.cu", cwd=tmp_path)
        assert r.returncode == 2 and str(missing) in r.stderr and "does not exist" in r.stderr, r.stderr
        assert not missing.exists()
        assert (tmp_path / "a.cu").read_text() == DIRTY
    finally:
        if missing.exists():  # the old behaviour, as root
            (missing / "report.txt").unlink(missing_ok=True)
            missing.rmdir()
    # Inside the working tree a missing folder is made, as before.
    r = run_cli(command, "-o", "reports/report.txt", "a.cu", cwd=tmp_path)
    assert r.returncode in (0, 1) and (tmp_path / "reports" / "report.txt").is_file(), r.stderr


# --- a killed run (item 8) ----------------------------------------------------------------------

KILLED_WRITE = """
import os, sys, time
from cuda2hip.fix import writeback
os.rename = os.replace = lambda *args, **kw: time.sleep(600)  # killed before the rename
writeback.atomic_write(sys.argv[1], b"half of the new content")
"""


def _killed_write(target: Path) -> Path:
    """What `kill -9` during a write leaves: the temporary file of a process that is gone."""
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITE, str(target)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 30
    while not _temp_files(target.parent) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (left,) = _temp_files(target.parent)
    return left


def test_temp_files_of_a_killed_run_are_never_copied_and_are_cleaned(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(DIRTY)
    left = _killed_write(src / "a.cu")
    assert (src / "a.cu").read_text() == DIRTY
    out = tmp_path / "out"
    r = run_cli("fix", "--output-dir", out, src, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not _temp_files(out) and (out / "a.cu").read_text() == FIXED
    assert "1 source file (1 changed, 0 renamed), 0 other files copied" in r.stderr
    # A later in-place run removes what the killed one left.
    r = run_cli("fix", src, cwd=tmp_path)
    assert r.returncode == 0 and not left.exists() and (src / "a.cu").read_text() == FIXED, r.stderr


def test_temp_files_of_a_running_process_are_left_alone(tmp_path):
    from cuda2hip.fix.writeback import remove_stale_temps, temp_prefix

    mine = tmp_path / f"{temp_prefix('a.cu')}x1y2z3.cuda2hip-tmp"  # this process: alive
    mine.write_text("being written")
    foreign = tmp_path / ".a.cu.not-ours.cuda2hip-tmp"  # no pid to check: kept while recent
    foreign.write_text("?")
    remove_stale_temps(tmp_path)
    assert mine.exists() and foreign.exists()
    old = time.time() - 2 * 86400
    os.utime(foreign, (old, old))
    remove_stale_temps(tmp_path)
    assert mine.exists() and not foreign.exists()


def test_stale_temp_files_in_the_output_tree_are_cleaned(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "a.cu").write_text(DIRTY)
    assert run_cli("fix", "--output-dir", out, src, cwd=tmp_path).returncode == 0
    left = _killed_write(out / "a.cu")
    assert run_cli("fix", "--output-dir", out, src, cwd=tmp_path).returncode == 0
    assert not left.exists()


# --- symlinks named on the command line (item 9) ----------------------------------------------

def test_named_symlink_leaving_the_tree_is_not_written_through(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "x.cu").write_text(DIRTY)
    (project / "link.cu").symlink_to("../outside/x.cu")
    (project / "linkdir").symlink_to("../outside")
    (project / "inside.cu").write_text(DIRTY)
    (project / "to_inside.cu").symlink_to("inside.cu")
    for name in ("link.cu", "linkdir/x.cu"):
        r = run_cli("fix", name, cwd=project)
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"{name}: symlink to" in r.stdout and "outside the project" in r.stdout, r.stdout
        assert (outside / "x.cu").read_text() == DIRTY
    # Reading through it is harmless: `check` reports on it.
    assert run_cli("check", "link.cu", cwd=project).returncode == 1
    # A link to a file of the project is written through, as in a walked tree.
    r = run_cli("fix", "to_inside.cu", cwd=project)
    assert r.returncode == 0 and (project / "inside.cu").read_text() == FIXED
    assert (project / "to_inside.cu").is_symlink()


# --- what the reports say ----------------------------------------------------------------------

def test_file_names_with_line_breaks_are_escaped(tmp_path):
    (tmp_path / "evil\nname.cu").write_text(DIRTY)
    for fmt in ("text", "concise"):
        r = run_cli("check", "--format", fmt, ".", cwd=tmp_path)
        assert r.returncode == 1
        assert "evil\\nname.cu:2:" in r.stdout, r.stdout
        assert not [line for line in r.stdout.splitlines() if line.startswith("name.cu")], r.stdout


def test_output_dir_summary_does_not_count_a_failed_write_as_changed(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "a.cu").write_text(DIRTY)
    (src / "b.cu").write_text(DIRTY)
    (out / "b.cu").mkdir(parents=True)  # a directory where the migrated file should go
    r = run_cli("fix", "--output-dir", out, src, cwd=tmp_path)
    assert r.returncode == 2
    assert "b.cu: cannot write to the output tree" in r.stdout, r.stdout
    assert "2 source files (1 changed, 0 renamed)" in r.stderr, r.stderr


# --- what a run reports of files it could not write (issue 32) ---------------------------------

def _without_write_override() -> list[str]:
    """Root writes anywhere; drop that capability so that a read-only folder means unwritable."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): cannot make a folder unwritable")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


THREE = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p);\n  cudaMalloc(&p, 4); }\n"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_cannot_be_written_is_reported_not_fixed(tmp_path, jobs):
    """`Fixed 5 findings in 2 files. Nothing remains.` when one of the two could not be written:
    its fixes are not counted, its findings (of the file as it is) remain, and the run says why."""
    project = tmp_path / "project"
    (project / "ro").mkdir(parents=True)
    (project / "ro" / "a.cu").write_text(THREE)
    (project / "b.cu").write_text(DIRTY)
    (project / "ro").chmod(0o555)
    many = []
    if jobs == "2":  # enough files for worker processes (runner.PARALLEL_THRESHOLD)
        for i in range(20):
            (project / f"c{i}.cu").write_text(DIRTY)
            many.append(f"c{i}.cu")
    runs = {}
    try:
        for fmt in ("json", "text"):
            for path in [project / "b.cu", *(project / m for m in many)]:
                path.write_text(DIRTY)  # each run fixes them
            runs[fmt] = subprocess.run([*_without_write_override(), sys.executable, "-m", "cuda2hip", "fix", "-j", jobs,
                                        "--no-cache", "--format", fmt, "."], cwd=project, capture_output=True,
                                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        (project / "ro").chmod(0o755)
    r = runs["text"]
    assert r.returncode == 2, r.stdout + r.stderr
    assert (project / "ro" / "a.cu").read_text() == THREE
    written = 1 + len(many)
    assert f"Fixed {2 * written} findings in {written} file{'s' if written > 1 else ''}." in r.stdout, r.stdout
    assert "3 findings remain (3 warning) in 1 of" in r.stdout, r.stdout
    assert "error: ro/a.cu: cannot write: Permission denied" in r.stdout, r.stdout
    # the remaining findings are those of the file as it is, placed on its real lines
    assert "ro/a.cu:3:3: HIP101" in r.stdout and "cudaMalloc(&p, 4); }" in r.stdout
    data = json.loads(runs["json"].stdout)
    assert runs["json"].returncode == 2
    assert data["summary"]["fixed"] == 2 * written and data["summary"]["files_changed"] == written
    left = [f for f in data["findings"] if f["path"] == "ro/a.cu"]
    assert len(left) == 3 and not any(f["fixed"] for f in left)
    assert [e["path"] for e in data["summary"]["errors"]] == ["ro/a.cu"]


def _cycling_rules(project: Path) -> None:
    """Two rules that undo each other: `fix` can never settle."""
    rules = project / "rules"
    rules.mkdir()
    for code, rid, old, new in (("USR001", "foo-to-bar", "foo", "bar"), ("USR002", "bar-to-foo", "bar", "foo")):
        (rules / f"{rid}.yaml").write_text(
            f"code: {code}\nid: {rid}\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
            f"docs: {{what: w, why: y}}\nrule: {{pattern: '{old}($$$A)'}}\n"
            f"fix: {{applicability: safe, template: '{new}($$$A)'}}\n")
    (project / "cuda2hip.toml").write_text('rule-dirs = ["rules"]\nselect = ["USR"]\n')


def test_an_unsettled_fix_loop_reports_the_file_as_it_is(tmp_path):
    """Fixes that never settle left the file untouched, yet the run said `Fixed 12 findings in 0
    files` and `... in 1 of 0 files`, with the findings of a text that was never written (ranges
    past the ends of its lines)."""
    project = tmp_path / "project"
    project.mkdir()
    _cycling_rules(project)
    text = "void g() {\n  foo(1);\n  bar(2);\n}\n"
    (project / "a.cu").write_text(text)
    r = run_cli("fix", "--format", "json", "a.cu", cwd=project)
    assert r.returncode == 2, r.stdout + r.stderr
    assert (project / "a.cu").read_text() == text
    data = json.loads(r.stdout)
    s = data["summary"]
    assert s["fixed"] == 0 and s["files_changed"] == 0 and s["files_scanned"] == 1, s
    assert "did not settle" in s["errors"][0]["reason"]
    lines = text.splitlines()
    assert sorted((f["code"], f["line"], f["column"], f["end_column"]) for f in data["findings"]) == \
        [("USR001", 2, 3, 9), ("USR002", 3, 3, 9)]
    for f in data["findings"]:
        assert f["end_column"] <= len(lines[f["line"] - 1]) + 1 and not f["fixed"]
    r = run_cli("fix", "a.cu", cwd=project)
    assert "Fixed 0 findings in 0 files." in r.stdout and "in 1 of 1 file" in r.stdout, r.stdout
