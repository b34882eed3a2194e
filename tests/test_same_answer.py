"""Same answer from anywhere: each file's settings come from the nearest configuration above it
(not the working directory's), the project root is that configuration's folder or the repository
root, and include directories (--include-dir, `include-dirs`, compile_commands.json) decide
header resolution, a compilation database's -D macros the `#if` arms."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


TREE = {
    # the project: a repository with a configuration at its root and another in sub/
    "proj/.git/HEAD": "ref: refs/heads/main\n",
    "proj/cuda2hip.toml": 'extend-exclude = ["vendor/"]\ninclude-dirs = ["include", "../ext/include"]\n',
    "proj/include/helpers.h": "#pragma once\n#include <cuda_runtime.h>\n"
                              "inline void cudaCheckLast() { cudaGetLastError(); }\n",
    "proj/src/a.cu": '#include "helpers.h"\n#include "ext.h"\nvoid f(float* p) {\n'
                     "  cudaMalloc(&p, 16);\n  cudaCheckLast();\n  cudaExtThing();\n}\n",
    "proj/vendor/v.cu": "#include <cuda_runtime.h>\nvoid g(float* p) { cudaMalloc(&p, 16); }\n",
    "proj/sub/cuda2hip.toml": 'ignore = ["HIP101"]\n',
    "proj/sub/b.cu": "#include <cuda_runtime.h>\nvoid g(float* p) { cudaMalloc(&p, 16); }\n",
    # a header outside the project root, found through `include-dirs`
    "ext/include/ext.h": "#pragma once\ninline int cudaExtThing() { return 1; }\n",
    "elsewhere/.keep": "",
}


def _findings(cwd: Path, *args) -> set[tuple[str, int, str]]:
    r = run_cli("check", "--no-cache", "--format", "json", "--show-info", *args, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    return {(os.path.realpath(cwd / f["path"]), f["line"], f["code"]) for f in json.loads(r.stdout)["findings"]}


def test_one_tree_checked_from_three_folders_gives_the_same_findings(tmp_path):
    _write(tmp_path, TREE)
    proj = tmp_path / "proj"
    from_root = _findings(proj, ".")
    from_sub = _findings(proj / "sub", "..")
    from_elsewhere = _findings(tmp_path / "elsewhere", "../proj")
    assert from_root == from_sub == from_elsewhere
    real = os.path.realpath(proj)
    got = {(os.path.relpath(p, real), line, code) for p, line, code in from_root}
    # sub/ has its own configuration (HIP101 ignored there); vendor/ is excluded by the root's;
    # the headers of `include-dirs` (in and outside the root) define the project's cuda* names
    assert ("sub/b.cu", 1, "HIP100") in got and not any(p == "sub/b.cu" and c == "HIP101" for p, _, c in got)
    assert not any(p.startswith("vendor/") for p, _, _ in got)
    assert ("src/a.cu", 4, "HIP101") in got
    assert not any(p == "src/a.cu" and line in (5, 6) for p, line, _ in got), got


def test_a_file_named_gets_the_configuration_above_it_not_the_working_directorys(tmp_path):
    _write(tmp_path, TREE)
    proj = tmp_path / "proj"
    # from the root, naming sub/b.cu: sub/'s configuration applies (ruff's rule)
    assert {c for _, _, c in _findings(proj, "sub/b.cu")} == {"HIP100"}
    # from sub/, naming ../src/a.cu: the root's configuration (its include-dirs) applies; the
    # header it includes is reported as left out of the run (HIP005)
    assert {(line, c) for _, line, c in _findings(proj / "sub", "../src/a.cu")} == {(1, "HIP005"), (4, "HIP101")}
    # paths are shown relative to the working directory
    r = run_cli("check", "--no-cache", "--format", "concise", "../src/a.cu", cwd=proj / "sub")
    assert "\n../src/a.cu:4:3: HIP101" in r.stdout, r.stdout
    assert f"`{proj / 'include' / 'helpers.h'}`" in r.stdout  # (HIP005 of the header: outside the working directory, absolute)


def test_without_configuration_the_root_is_the_repository_root(tmp_path):
    """A quoted include found at the repository root resolves from any folder (the root was the
    working directory)."""
    _write(tmp_path, {"repo/.git/HEAD": "ref: refs/heads/main\n",
                      "repo/common.h": "#pragma once\ninline void cudaOwnHelper() {}\n",
                      "repo/deep/er/k.cu": '#include "common.h"\nvoid f() { cudaOwnHelper(); }\n'})
    repo = tmp_path / "repo"
    assert _findings(repo, "deep") == _findings(repo / "deep" / "er", ".") == set()


def test_include_dir_on_the_command_line(tmp_path):
    _write(tmp_path, {"p/.git/HEAD": "", "p/inc/own.h": "#pragma once\ninline void cudaOwnHelper() {}\n",
                      "p/src/k.cu": '#include "own.h"\nvoid f() { cudaOwnHelper(); }\n'})
    p = tmp_path / "p"
    assert {c for _, _, c in _findings(p, "src")} == {"HIP190"}  # own.h not found: an unknown CUDA name
    assert _findings(p, "-I", "inc", "src") == set()
    assert _findings(p / "src", "--include-dir", "../inc", ".") == set()


CU = ('#include "defs.h"\n'
      "#if USE_PTX\n"
      '__device__ int lane() { int l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }\n'
      "#endif\n"
      "void f() { cudaProjThing(); }\n")


@pytest.mark.parametrize("where", ["build", "."])
def test_compile_commands_defines_and_include_paths(tmp_path, where):
    """The build's -D macros decide the `#if` arms (USE_PTX=0: the PTX is never compiled, so no
    HIP501), its -I folders inside the project resolve headers (defs.h defines cudaProjThing);
    folders outside the project (the CUDA toolkit) are no project headers."""
    _write(tmp_path, {"cc/.git/HEAD": "", "cc/src/k.cu": CU,
                      "cc/inc/defs.h": "#pragma once\ninline void cudaProjThing() {}\n"})
    cc = tmp_path / "cc"
    before = {(line, c) for _, line, c in _findings(cc, "src")}
    assert (3, "HIP501") in before and (5, "HIP190") in before
    database = cc / where / "compile_commands.json"
    database.parent.mkdir(exist_ok=True)
    database.write_text(json.dumps([{"directory": str(cc / "build"), "file": "../src/k.cu",
                                     "command": "nvcc -DUSE_PTX=0 -I../inc -I/usr/local/cuda/include "
                                                "-c ../src/k.cu -o k.o"}]))
    after = {(line, c) for _, line, c in _findings(cc, "src")}
    assert (3, "HIP501") not in after and (5, "HIP190") not in after, after
    # found from any folder; named with --compile-commands from elsewhere
    assert {(line, c) for _, line, c in _findings(cc / "src", ".")} == after
    database.rename(tmp_path / "db.json")
    assert {(line, c) for _, line, c in _findings(cc, "--compile-commands", "../db.json", "src")} == after


def test_compile_commands_arguments_form_and_bad_database(tmp_path):
    _write(tmp_path, {"cc/.git/HEAD": "", "cc/src/k.cu": CU, "cc/inc/defs.h": "inline void cudaProjThing() {}\n"})
    cc = tmp_path / "cc"
    (cc / "compile_commands.json").write_text(json.dumps([{
        "directory": str(cc), "file": "src/k.cu",
        "arguments": ["clang++", "-D", "USE_PTX=0", "-I", "inc", "-c", "src/k.cu"]}]))
    assert not {c for _, _, c in _findings(cc, "src")} & {"HIP501", "HIP190"}
    (cc / "compile_commands.json").write_text("{not json")
    r = run_cli("check", "src", cwd=cc)
    assert r.returncode == 2 and "compile_commands.json: not a compilation database" in r.stderr


def test_a_compilation_database_others_can_write_is_not_read(tmp_path):
    _write(tmp_path, {"cc/.git/HEAD": "", "cc/src/k.cu": CU, "cc/inc/defs.h": "inline void cudaProjThing() {}\n"})
    cc = tmp_path / "cc"
    database = cc / "compile_commands.json"
    database.write_text(json.dumps([{"directory": str(cc), "file": "src/k.cu",
                                     "command": "nvcc -DUSE_PTX=0 -Iinc -c src/k.cu"}]))
    database.chmod(0o666)
    r = run_cli("check", "--no-cache", "--format", "json", "src", cwd=cc)
    assert "not reading" in r.stderr and "compile_commands.json" in r.stderr
    assert {"HIP501", "HIP190"} <= {f["code"] for f in json.loads(r.stdout)["findings"]}
    # named, it is the user's choice
    r = run_cli("check", "--no-cache", "--format", "json", "--compile-commands", database, "src", cwd=cc)
    assert not {"HIP501", "HIP190"} & {f["code"] for f in json.loads(r.stdout)["findings"]}
