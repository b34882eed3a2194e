"""Whole-tree migration: `fix --output-dir OUT SRC` (a complete migrated copy), in-place tree
runs, `--rename`, .gitignore / exclude, symlinks; idempotency, completeness, and nothing
written outside OUT."""

from __future__ import annotations

import json

import os
import shutil
from pathlib import Path

import pytest

from conftest import AT_EVERY_RELEASE, FIXTURES, run_cli

PROJECT = FIXTURES / "batch" / "project"
EXPECTED_RENAME = FIXTURES / "batch" / "expected-rename"


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every entry under root: files by content and mtime, links by target, directories."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if skip is not None and (d == skip or skip in d.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                st = p.stat()
                out[rel] = ("file", p.read_bytes(), st.st_mtime_ns, st.st_mode)
    return out


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def project(tmp_path) -> Path:
    """The fixture project; runs use it as the working directory, so it is the project root
    (which decides, e.g., whether a header's include counts for the files that include it)."""
    src = tmp_path / "project"
    shutil.copytree(PROJECT, src, symlinks=True)
    return src


@AT_EVERY_RELEASE  # the migrated copy is the same for every target release
def test_output_dir_is_a_complete_migrated_copy(project, tmp_path, nvcc, hipcc):
    assert nvcc(project / "src" / "main.cu").returncode == 0  # the input is valid CUDA
    before = snapshot(project)
    out = tmp_path / "out"
    res = run_cli("fix", "--output-dir", out, "--rename", "--target-rocm", hipcc.release, project, cwd=project)
    assert res.returncode == 0, res.stderr
    # sources: three C++/CUDA files, one header, the Makefile (migrated too); others: docs, data
    assert "5 source files (5 changed, 2 renamed), 3 other files copied" in res.stderr
    assert snapshot(project) == before  # the source tree is untouched
    # Completeness: every input file is in OUT (sources under their new names).
    renamed = {"src/main.cu": "src/main.hip", "src/impl/saxpy.cu": "src/impl/saxpy.hip"}
    assert set(files_of(out)) == {renamed.get(rel, rel) for rel in files_of(project)}
    assert files_of(out) == files_of(EXPECTED_RENAME)
    assert os.access(out / "data" / "gen.sh", os.X_OK)  # permission bits are kept
    # The copy builds: includes of renamed files were updated.
    compiled = hipcc(out / "src" / "main.hip")
    assert compiled.returncode == 0, compiled.stderr


def test_second_run_changes_nothing(project, tmp_path):
    out = tmp_path / "out"
    assert run_cli("fix", "--output-dir", out, "--rename", project, cwd=project).returncode == 0
    first = snapshot(out)
    for extra in ([], ["--no-cache"]):  # from the cache, and recomputed
        res = run_cli("fix", "--output-dir", out, "--rename", project, *extra, cwd=project)
        assert res.returncode == 0, res.stderr
        assert snapshot(out) == first  # same content, nothing rewritten (same mtimes)
    # The migrated tree itself has nothing left to fix.
    res = run_cli("fix", out, cwd=out)
    assert res.returncode == 0 and "Fixed 0 findings" in res.stdout, res.stdout
    assert snapshot(out) == first


def test_in_place_tree_fix_is_idempotent(project):
    res = run_cli("fix", project, cwd=project)
    assert res.returncode == 0, res.stderr
    assert "in 5 files" in res.stdout
    once = snapshot(project)
    res = run_cli("fix", project, cwd=project)
    assert "Fixed 0 findings in 0 files" in res.stdout
    assert snapshot(project) == once
    assert not list(project.rglob("*.cuda2hip-tmp"))


def test_in_place_rename_updates_includes_and_links(project):
    (project / "src" / "current.cu").symlink_to("impl/saxpy.cu")
    res = run_cli("fix", "--rename", project, cwd=project)
    assert res.returncode == 0, res.stderr
    assert not (project / "src" / "main.cu").exists()
    assert files_of(project) == files_of(EXPECTED_RENAME)
    assert os.readlink(project / "src" / "current.cu") == "impl/saxpy.hip"
    assert "1 link updated" in res.stderr
    # Renamed sources are .hip files, which cuda2hip still checks; nothing is left to do.
    again = run_cli("fix", "--rename", project, cwd=project)
    assert again.returncode == 0 and "5 source files (0 changed, 0 renamed)" in again.stderr


def test_rename_never_overwrites_an_existing_file(project, tmp_path):
    (project / "src" / "main.hip").write_text("// already here\n")
    out = tmp_path / "out"
    res = run_cli("fix", "--output-dir", out, "--rename", project, cwd=project)
    assert res.returncode == 2
    assert "src/main.cu: cannot rename to src/main.hip: a file of that name exists" in res.stdout
    assert (out / "src" / "main.hip").read_text() == "// already here\n"
    assert (out / "src" / "main.cu").is_file()  # migrated under its own name
    res = run_cli("fix", "--rename", project, cwd=project)
    assert res.returncode == 2
    assert (project / "src" / "main.hip").read_text() == "// already here\n"
    assert (project / "src" / "main.cu").is_file()


@pytest.mark.parametrize("where", ["inside", "same", "parent"])
def test_output_dir_must_not_overlap_the_source(project, where):
    out = {"inside": project / "migrated", "same": project, "parent": project.parent}[where]
    before = snapshot(project.parent)
    res = run_cli("fix", "--output-dir", out, project, cwd=project)
    assert res.returncode == 2
    assert "--output-dir" in res.stderr and ("inside" in res.stderr)
    assert snapshot(project.parent) == before


def test_nothing_is_written_outside_the_output_dir(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    # Links in the source leaving the tree (a directory with sources, a file) are copied as
    # links, never followed.
    (project / "vendor").symlink_to(outside)
    (project / "leak.cu").symlink_to(outside / "victim.cu")
    (outside / "victim.cu").write_text("void v() { cudaFree(0); }\n")
    out = tmp_path / "out"
    out.mkdir()
    # An output directory that already holds a link out of it: never written through.
    (out / "docs").symlink_to(outside)
    before = snapshot(tmp_path, skip=out)
    res = run_cli("fix", "--output-dir", out, project, cwd=project)
    assert snapshot(tmp_path, skip=out) == before
    assert res.returncode == 2  # docs/README.md could not be placed
    assert "docs/README.md: cannot copy to the output tree" in res.stdout
    assert "refusing to write through it" in res.stdout
    assert os.readlink(out / "vendor") == str(outside)
    assert os.readlink(out / "leak.cu") == str(outside / "victim.cu")
    assert (out / "src" / "main.cu").is_file()  # the rest of the tree is there


def test_gitignore_and_exclude(project, tmp_path):
    (project / ".git").mkdir()  # the project is a repository: its .gitignore applies
    (project / ".gitignore").write_text("build/\n*.gen.cu\n")
    (project / "build").mkdir()
    (project / "build" / "obj.cu").write_text("void b() { cudaFree(0); }\n")
    (project / "src" / "table.gen.cu").write_text("void g() { cudaFree(0); }\n")
    (project / "third_party").mkdir()
    (project / "third_party" / "lib.cu").write_text("void t() { cudaFree(0); }\n")
    (project / "cuda2hip.toml").write_text('exclude = ["third_party/"]\n')
    out = tmp_path / "out"
    res = run_cli("fix", "--output-dir", out, project, cwd=project)
    assert res.returncode == 0, res.stderr
    assert not (out / "build").exists() and not (out / "src" / "table.gen.cu").exists()
    assert not (out / ".git").exists()
    # Excluded: copied as it is (the copy stays complete), not migrated.
    assert (out / "third_party" / "lib.cu").read_text() == "void t() { cudaFree(0); }\n"
    res = run_cli("check", ".", cwd=project)
    assert "build/obj.cu" not in res.stdout and "table.gen.cu" not in res.stdout
    assert "third_party" not in res.stdout and "src/main.cu" in res.stdout


def test_in_place_fix_writes_through_links_inside_the_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    outside = tmp_path / "outside.cu"
    outside.write_text("void o() { cudaFree(0); }\n")
    (tree / "real.cu").write_text("void r() { cudaFree(0); }\n")
    (tree / "alias.cu").symlink_to("real.cu")
    (tree / "out.cu").symlink_to(outside)
    res = run_cli("fix", tree)
    assert res.returncode == 0, res.stderr
    assert (tree / "real.cu").read_text() == "#include <hip/hip_runtime.h>\nvoid r() { hipFree(0); }\n"
    assert os.readlink(tree / "alias.cu") == "real.cu"  # still a link
    assert outside.read_text() == "void o() { cudaFree(0); }\n"  # never followed out
    assert "in 1 file." in res.stdout


def test_parallel_output_is_deterministic(tmp_path):
    tree = tmp_path / "tree"
    for i in range(40):
        d = tree / f"d{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.cu").write_text("".join(f"void f{i}_{k}() {{ cudaFree(0); cudaDeviceSynchronize(); }}\n"
                                            for k in range(i % 7 + 1)))
    serial = run_cli("check", "--no-cache", "-j", "1", "--format", "json", tree)
    parallel = run_cli("check", "--no-cache", "-j", "2", "--format", "json", tree)
    cached = run_cli("check", "-j", "2", "--format", "json", tree)
    again = run_cli("check", "-j", "2", "--format", "json", tree)
    assert serial.returncode == parallel.returncode == cached.returncode == again.returncode == 1
    assert serial.stdout == parallel.stdout == cached.stdout == again.stdout


def test_in_place_rename_findings_do_not_depend_on_worker_timing(tmp_path):
    """A source that includes a `.cu` file sees the names it defines whether or not the included
    file has been renamed yet (by this worker, another one, earlier or later)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    n = 24
    for i in range(n):
        nxt, prev = (i + 1) % n, (i - 1) % n  # includes forwards and backwards in path order
        (tree / f"k{i:02}.cu").write_text(
            f'#include "k{nxt:02}.cu"\n#include "k{prev:02}.cu"\n'
            f"#pragma once\nvoid cudaHelper{i}() {{ cudaFree(0); }}\n"
            f"inline void use{i}() {{ cudaHelper{nxt}(); cudaHelper{prev}(); }}\n")
    res = run_cli("fix", "--rename", "-j", "2", "--format", "json", tree, cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    unknown = [f for f in json.loads(res.stdout)["findings"]
               if f["code"] == "HIP190" and "unknown CUDA name" in f["message"]]
    assert unknown == []
    assert sorted(p.name for p in tree.iterdir()) == [f"k{i:02}.hip" for i in range(n)]
    assert '#include "k01.hip"' in (tree / "k00.hip").read_text()


@pytest.mark.integration
def test_benchmark_runs_in_one_command(tmp_path):
    """bench/run.py end to end on a small corpus (the README's figures come from the default
    250,000-line run)."""
    import json
    import subprocess
    import sys

    from conftest import ROOT

    out = tmp_path / "bench.json"
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--current-env", "--lines", "3000",
                          "--repeat", "1", "--single", "3", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    figures = json.loads(out.read_text())
    assert figures["corpus"]["lines"] >= 3000
    for key in ("check", "fix_in_place", "fix_output_dir", "check_cached"):
        assert figures[key]["lines_per_s"] > 0 and figures[key]["peak_rss_mb"] > 0
    for key in ("single_file_check", "batch_check", "single_file_check_in_tree", "batch_check_in_tree", "floor"):
        assert figures[key]["runs"] == 3 and figures[key]["median_ms"] > 0
    assert figures["import_ms"]["median_ms"] > 0
    # issue 32's measures: a ~200-line file (this corpus's .cu files hold 203 to 392 lines) checked
    # alone with --no-cache, against the floor; `fix --no-cache --output-dir` against the parse floor
    assert 200 <= figures["single_file_check"]["lines"] <= 210
    assert figures["single_file_check_in_tree"]["lines"] == figures["single_file_check"]["lines"]
    assert set(figures["targets"]) == {"fix_over_parse_floor", "single_file_over_floor_ms", "batch_over_single",
                                       "peak_rss_mb"}
    floor = figures["floor"]["median_ms"]
    assert figures["targets"]["single_file_over_floor_ms"]["value"] == round(
        figures["single_file_check"]["median_ms"] - floor, 1)
    assert figures["targets"]["fix_over_parse_floor"]["value"] == round(
        figures["fix_output_dir"]["seconds"] / figures["parse_floor"]["seconds"], 2)
    assert "lines/s" in res.stdout and "target fix_over_parse_floor" in res.stdout
    # the parse floor: parsing alone is cheaper than the whole fix run
    assert 0 < figures["parse_floor"]["seconds"] < figures["fix_output_dir"]["seconds"]
    assert 0 < figures["parse_floor_parallel"]["seconds"]
    assert "x the parse floor in one process" in res.stdout


def test_parse_floor_shares_the_bytes_evenly_and_parses_every_source_file(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "bench"))
    import parse_floor

    sizes = {"a.cu": 900, "b.cu": 500, "c.cuh": 400, "d.h": 100, "notes.txt": 5000}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"int x;\n" * (size // 7))
    paths = [p for p in tmp_path.iterdir() if p.suffix in parse_floor.SOURCE_SUFFIXES]
    shares = parse_floor.shares(paths, 2)
    assert sorted(sorted(os.path.basename(p) for p in s) for s in shares) == [["a.cu", "d.h"], ["b.cu", "c.cuh"]]
    (tmp_path / "bad.cu").write_bytes(b"\xff\xfe int (((")  # tree-sitter parses anything
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "parse_floor.py"), str(tmp_path), "--jobs", "2"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "parse_floor.py"), str(empty)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "no source files" in res.stderr


RENAMES = {"src/main.cu": "src/main.hip", "src/impl/k.cu": "src/impl/k.hip", "top.cu": "top.hip"}


@pytest.mark.parametrize("rel,line,expected", [
    ("src/main.cu", '#include "impl/k.cu"', '#include "impl/k.hip"'),  # next to the includer
    ("src/impl/x.cuh", '#  include "k.cu"  // unity', '#  include "k.hip"  // unity'),
    ("src/main.cu", '#include "src/impl/k.cu"', '#include "src/impl/k.hip"'),  # from the top
    ("src/main.cu", "#include <top.cu>", "#include <top.hip>"),
    ("src/main.cu", "#include <impl/k.cu>", "#include <impl/k.cu>"),  # <...>: not next to it
    ("src/main.cu", '#include "other/k.cu"', '#include "other/k.cu"'),  # another file
    ("src/main.cu", '// #include "impl/k.cu"', '// #include "impl/k.cu"'),  # a comment
    ("src/main.cu", 'const char* s = "impl/k.cu";', 'const char* s = "impl/k.cu";'),
])
def test_includes_of_renamed_files(rel, line, expected):
    from cuda2hip.run.tree import rewrite_includes

    assert rewrite_includes(line.encode() + b"\n", rel, RENAMES) == expected.encode() + b"\n"


@pytest.mark.parametrize("rel,text,expected", [
    ("CMakeLists.txt", "add_executable(app src/main.cu src/util.cpp)", "add_executable(app src/main.hip src/util.cpp)"),
    ("src/CMakeLists.txt", 'add_library(k STATIC "impl/k.cu";main.cu)', 'add_library(k STATIC "impl/k.hip";main.hip)'),
    ("Makefile", "main: src/main.cu\n\thipcc -o $@ src/main.cu", "main: src/main.hip\n\thipcc -o $@ src/main.hip"),
    ("Makefile", "OBJ = src/main.cu.o xsrc/main.cu src/main.cuh", "OBJ = src/main.cu.o xsrc/main.cu src/main.cuh"),
    # issue 13: the lists and patterns a Makefile builds from
    ("Makefile", "CUFILES := src/main.cu \\\n  top.cu\n", "CUFILES := src/main.hip \\\n  top.hip\n"),
    ("Makefile", "CUFILES:=top.cu\\\n", "CUFILES:=top.hip\\\n"),
    ("Makefile", "SRCS = $(SRC_DIR)/k.cu ${SRC}/main.cu $(X)/other.cu", "SRCS = $(SRC_DIR)/k.hip ${SRC}/main.hip $(X)/other.cu"),
    ("Makefile", "%.o: %.cu k.h\n\t$(NVCC) -c $< -o $@\n%: %.cu\n", "%.o: %.hip k.h\n\t$(NVCC) -c $< -o $@\n%: %.hip\n"),
    ("Makefile", "OBJS = $(CUFILES:.cu=.o) $(patsubst %.cu,%.o,$(SRCS))", "OBJS = $(CUFILES:.hip=.o) $(patsubst %.hip,%.o,$(SRCS))"),
    ("Makefile", "SRCS := $(wildcard src/*.cu)\nvpath %.cu src\n", "SRCS := $(wildcard src/*.hip)\nvpath %.hip src\n"),
    ("Makefile", ".SUFFIXES: .cu .o\n.cu.o:\n\tnvcc -c $<\n", ".SUFFIXES: .hip .o\n.hip.o:\n\tnvcc -c $<\n"),
    ("Makefile", "%.cu.o: %.cuh %.cu\n\tnvcc -x cu -c $<", "%.cu.o: %.cuh %.hip\n\tnvcc -x cu -c $<"),
    ("CMakeLists.txt", 'file(GLOB SRCS "src/*.cu" src/*.cuh)', 'file(GLOB SRCS "src/*.hip" src/*.cuh)'),
    ("CMakeLists.txt", "set(X %.cu)", "set(X %.cu)"),  # not a pattern in CMake
])
def test_build_files_follow_renames(rel, text, expected):
    from cuda2hip.run.build_renames import rewrite_build_paths

    language = "cmake" if rel.endswith("CMakeLists.txt") else "make"
    assert rewrite_build_paths(text.encode(), rel, RENAMES, language) == expected.encode()
