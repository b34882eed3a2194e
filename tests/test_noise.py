"""Findings worth a human's minute: one finding per build file and flag (not per occurrence),
parse-recovery hints only where something CUDA is, no finding on the project's own names."""

from __future__ import annotations

import json

from conftest import run_cli

MAKEFILE = ("NVCC ?= nvcc\n"
            "FLAGS = -arch=sm_80 --expt-relaxed-constexpr\n"
            "a: a.cu\n\t$(NVCC) -arch=sm_80 --expt-relaxed-constexpr -o a a.cu\n"
            "b: b.cu\n\t$(NVCC) -arch=sm_70 --expt-relaxed-constexpr -o b b.cu\n"
            "c: c.cu\n\tnvcc -o c c.cu\n")


def _findings(cwd, *args):
    r = run_cli("check", "--no-cache", "--format", "json", "--show-info", *args, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)["findings"]


def test_one_finding_per_build_file_and_flag(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    got = sorted((f["code"], f["line"], f["message"].split("`")[1]) for f in _findings(tmp_path, "Makefile"))
    assert got == [("HIP751", 1, "nvcc"), ("HIP752", 2, "--expt-relaxed-constexpr"), ("HIP752", 2, "-arch=sm_80")]
    arch = next(f for f in _findings(tmp_path, "Makefile") if "-arch" in f["message"])
    assert arch["message"].endswith("(and 2 more in this file: lines 4, 6)") and arch["data"]["occurrences"] == 3
    # the one finding's fix makes every place's edit; a second run changes nothing
    r = run_cli("fix", "--no-cache", "--offload-arch", "gfx90a", "Makefile", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (tmp_path / "Makefile").read_text()
    assert "nvcc" not in text and "sm_" not in text and "expt" not in text
    assert text.count("--offload-arch=gfx90a") == 3 and text.count("hipcc") == 2
    r = run_cli("fix", "--no-cache", "--offload-arch", "gfx90a", "--diff", "Makefile", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("Fixed 0") or "---" not in r.stdout


def test_a_suppressed_occurrence_stays_on_its_own(tmp_path):
    (tmp_path / "Makefile").write_text("A = -arch=sm_80\n# cuda2hip: ignore[HIP752]\nB = -arch=sm_80\n"
                                       "C = -arch=sm_80\n")
    got = [(f["line"], f["suppressed"]) for f in _findings(tmp_path, "Makefile") if f["code"] == "HIP752"]
    assert sorted(got) == [(1, False), (3, True)]


def test_parse_recovery_only_where_something_cuda_is(tmp_path):
    # plain C and a Makefile the grammars stumble on, nothing CUDA there: no hint
    (tmp_path / "plain.c").write_text("int main( { return 0; }\n")
    (tmp_path / "Makefile").write_text("ifeq ($(X),1)\nall:\n\techo $(\n")
    (tmp_path / "k.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k( { }\n")
    got = [(f["path"], f["code"]) for f in _findings(tmp_path, ".") if f["code"] == "HIP002"]
    assert got == [("k.cu", "HIP002")]


def test_no_finding_on_the_projects_own_cuda_looking_names(tmp_path):
    (tmp_path / "k.cu").write_text("#include <hip/hip_runtime.h>\n"
                                   "#define CUDA_CHECK(x) do { if ((x) != hipSuccess) abort(); } while (0)\n"
                                   "inline void cudaCheckLast() { CUDA_CHECK(hipGetLastError()); }\n"
                                   "void f() { CUDA_CHECK(hipDeviceSynchronize()); cudaCheckLast(); }\n")
    assert _findings(tmp_path, "k.cu") == []
