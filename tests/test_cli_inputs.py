"""The command-line conventions of what a run takes in and leaves behind: standard input (`-`
with --stdin-filename), --exclude / --extend-exclude, `fix --output-dir` keeping the output
tree in step with the input, and configuration errors that say how to fix them."""

from __future__ import annotations

import json
import os

from conftest import run_cli

DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaMalloc(&p, 16); }\n"
CLEAN = "#include <hip/hip_runtime.h>\nvoid f(float* p) { hipMalloc(&p, 16); }\n"
PTX = '#include <hip/hip_runtime.h>\n__device__ int f() { int l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }\n'


def _codes(r):
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(r.stdout)["findings"])


# ---------------------------------------------------------------- standard input

def test_check_stdin_with_stdin_filename(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text('[per-file-ignores]\n"legacy/*" = ["HIP100"]\n')
    r = run_cli("check", "--format", "json", "--stdin-filename", "src/k.cu", "-", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 1 and _codes(r) == [("src/k.cu", 1, "HIP100"), ("src/k.cu", 2, "HIP101")]
    # the name decides the per-file-ignores (and the language); nothing is read from disk
    r = run_cli("check", "--format", "json", "--stdin-filename", "legacy/k.cu", "-", cwd=tmp_path, input=DIRTY)
    assert _codes(r) == [("legacy/k.cu", 2, "HIP101")]
    r = run_cli("check", "--stdin-filename", "k.cu", "-", cwd=tmp_path, input=DIRTY)
    assert "k.cu:2:20: HIP101" in r.stdout and "2 | void f(float* p) { cudaMalloc" in r.stdout
    assert not (tmp_path / "k.cu").exists()


def test_fix_stdin_prints_the_migrated_text(tmp_path):
    r = run_cli("fix", "--stdin-filename", "k.cu", "-", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 0 and r.stdout == CLEAN, r.stderr
    r = run_cli("fix", "--diff", "--stdin-filename", "k.cu", "-", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 1 and "+void f(float* p) { hipMalloc(&p, 16); }" in r.stdout
    r = run_cli("fix", "--stdin-filename", "k.cu", "-", cwd=tmp_path,
                input=PTX)
    assert r.returncode == 1 and r.stdout == PTX and "k.cu:2:" in r.stderr  # what is left: stderr


def test_stdin_misuse_is_a_usage_error(tmp_path):
    r = run_cli("check", "-", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 2 and "--stdin-filename" in r.stderr
    r = run_cli("check", "--stdin-filename", "notes.txt", "-", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 2 and "not a recognised source file type" in r.stderr
    (tmp_path / "a.cu").write_text(DIRTY)
    r = run_cli("check", "--stdin-filename", "k.cu", "a.cu", cwd=tmp_path)
    assert r.returncode == 2 and "give `-` as the path" in r.stderr
    r = run_cli("check", "-", "a.cu", cwd=tmp_path, input=DIRTY)
    assert r.returncode == 2 and "the only path" in r.stderr


# ---------------------------------------------------------------- --exclude / --extend-exclude

def test_exclude_and_extend_exclude_on_the_command_line(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text('exclude = ["third_party/"]\n')
    for rel in ("src/a.cu", "third_party/b.cu", "gen/c.cu"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(DIRTY)

    def paths(*args):
        r = run_cli("check", "--no-cache", "--format", "json", *args, ".", cwd=tmp_path)
        return sorted({p for p, _, _ in _codes(r)})

    assert paths() == ["gen/c.cu", "src/a.cu"]
    assert paths("--extend-exclude", "gen/") == ["src/a.cu"]
    assert paths("--exclude", "gen/,src/") == ["third_party/b.cu"]  # replaces the configuration's


# ---------------------------------------------------------------- fix --output-dir

def test_output_dir_removes_what_an_earlier_run_wrote_and_nothing_else(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "sub").mkdir(parents=True)
    for name in ("a.cu", "b.cu", "sub/c.cu"):
        (src / name).write_text(DIRTY)
    (src / "notes.txt").write_text("notes\n")
    r = run_cli("fix", "--output-dir", out, src, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # OUT holds the migrated tree and nothing else (the record is kept in the cache folder)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        ["a.cu", "b.cu", "notes.txt", "sub/c.cu"]
    # the user's own file in the output, and an output file the user changed since
    (out / "mine.txt").write_text("keep me\n")
    (out / "b.cu").write_text("// edited by hand\n")
    for name in ("a.cu", "b.cu", "sub/c.cu", "notes.txt"):
        os.remove(src / name)
    r = run_cli("fix", "--output-dir", out, src, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert left == ["b.cu", "mine.txt"], left  # sub/ went with c.cu
    assert "3 files of an earlier run removed" in r.stderr
    # nothing more to remove: a third run says nothing of it
    r = run_cli("fix", "--output-dir", out, src, cwd=tmp_path)
    assert r.returncode == 0 and "removed" not in r.stderr


def test_a_record_naming_paths_outside_the_output_removes_nothing(tmp_path):
    from cuda2hip.run.manifest import record_path, sync

    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    (tmp_path / "elsewhere").mkdir()
    (out / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "y.txt").write_text("y")
    st, sty = os.stat(victim), os.stat(tmp_path / "elsewhere" / "y.txt")
    record = record_path(out)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"entries": {
        "../victim.txt": {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns},
        str(victim): {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns},
        "link/y.txt": {"kind": "file", "size": sty.st_size, "mtime_ns": sty.st_mtime_ns}}}))
    assert sync(out, []) == []
    assert victim.exists() and (tmp_path / "elsewhere" / "y.txt").exists()


# ---------------------------------------------------------------- configuration errors

def test_config_errors_suggest_the_fix(tmp_path):
    (tmp_path / "a.cu").write_text(DIRTY)
    cases = {
        "target-rocm = 5.2\n": 'target-rocm = "5.2"',
        'targt-rocm = "7.2"\n': "did you mean `target-rocm`?",
        'target_rocm = "7.2"\n': "did you mean `target-rocm`?",
        '[build]\noffload-archs = ["gfx90a"]\n': "did you mean `offload-arch`?",
        "zzz = 1\n": "known keys: build, cache,",
    }
    for text, hint in cases.items():
        (tmp_path / "cuda2hip.toml").write_text(text)
        r = run_cli("check", "a.cu", cwd=tmp_path)
        assert r.returncode == 2 and hint in r.stderr, (text, r.stderr)
