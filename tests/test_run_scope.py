"""Issue 13: a run works on exactly the files it is given. `fix FILE` writes FILE only, `--stdout`
prints the named file, `--diff` is what `fix` writes; a local header left out that needs
migration is reported on the including line (HIP005), or taken in with --follow-includes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import run_cli

# The shape of llm.c's dev/cuda: a kernel file including a shared header that uses CUDA names.
COMMON_H = ("#pragma once\n#include <cuda_runtime.h>\n"
            "inline void cudaCheck(cudaError_t error) { if (error != cudaSuccess) { exit(1); } }\n")
GELU_CU = ('#include <cuda_runtime.h>\n#include "common.h"\n'
           "__global__ void gelu(float* out, const float* inp, int N) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) out[i] = inp[i]; }\n"
           "int main() { float* d; cudaCheck(cudaMalloc(&d, 16)); cudaFree(d); }\n")


@pytest.fixture
def llmc(tmp_path):
    proj = tmp_path / "dev"
    proj.mkdir()
    (proj / "cuda2hip.toml").write_text("")  # the project root
    (proj / "common.h").write_text(COMMON_H)
    (proj / "gelu_forward.cu").write_text(GELU_CU)
    return proj


def fix(*args, cwd):
    return run_cli("fix", "--no-cache", *args, cwd=cwd)


def findings(*args, cwd, command="check"):
    proc = run_cli(command, "--no-cache", "--format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    # `fix --diff` prints the diff on stdout and the report on stderr
    return json.loads(proc.stderr if "--diff" in args else proc.stdout)["findings"]


def test_stdout_prints_the_named_file(llmc):
    proc = fix("--stdout", "gelu_forward.cu", cwd=llmc)
    assert proc.stdout.startswith("#include <hip/hip_runtime.h>\n#include \"common.h\"\n"), proc.stdout
    assert "cudaMalloc" not in proc.stdout and "__global__ void gelu" in proc.stdout
    # ... also when the run takes the header in
    proc = fix("--stdout", "--follow-includes", "./gelu_forward.cu", cwd=llmc)
    assert "__global__ void gelu" in proc.stdout and "inline void cudaCheck" not in proc.stdout
    assert (llmc / "common.h").read_text() == COMMON_H and (llmc / "gelu_forward.cu").read_text() == GELU_CU


def test_fix_writes_only_the_named_file_and_reports_the_header(llmc):
    proc = fix("--format", "concise", "gelu_forward.cu", cwd=llmc)
    assert (llmc / "common.h").read_text() == COMMON_H  # not named: not written
    assert "hipMalloc(&d, 16)" in (llmc / "gelu_forward.cu").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "HIP005" in x)
    assert line.startswith("gelu_forward.cu:2:1: HIP005") and "`common.h`" in line
    assert "`cuda2hip fix common.h`" in line and "--follow-includes" in line
    # the command of the message migrates the header; then nothing is reported any more
    assert fix("common.h", cwd=llmc).returncode in (0, 1)
    assert "hipError_t" in (llmc / "common.h").read_text()
    assert not [f for f in findings("gelu_forward.cu", cwd=llmc) if f["code"] == "HIP005"]


def test_check_and_fix_agree_on_scope(llmc):
    checked = findings("gelu_forward.cu", cwd=llmc)
    previewed = findings("--diff", "gelu_forward.cu", cwd=llmc, command="fix")
    assert {f["path"] for f in checked} == {f["path"] for f in previewed} == {"gelu_forward.cu"}
    assert [f["line"] for f in checked if f["code"] == "HIP005"] == [2]
    assert [f["line"] for f in previewed if f["code"] == "HIP005"] == [2]


@pytest.mark.parametrize("how", ["option", "config"])
def test_follow_includes_migrates_the_headers(llmc, how):
    if how == "config":
        (llmc / "cuda2hip.toml").write_text("follow-includes = true\n")
    fix(*(["--follow-includes"] if how == "option" else []), "gelu_forward.cu", cwd=llmc)
    assert "hipError_t" in (llmc / "common.h").read_text()
    assert "hipMalloc" in (llmc / "gelu_forward.cu").read_text()


def _tree(tmp_path):
    """src/main.cu -> src/kernels.cuh -> include/common.h (found from the project root)."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "include").mkdir()
    (proj / "cuda2hip.toml").write_text("")
    (proj / "include" / "common.h").write_text(COMMON_H)
    (proj / "src" / "kernels.cuh").write_text('#pragma once\n#include "include/common.h"\n'
                                              "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
                                              "inline void sync() { cudaDeviceSynchronize(); }\n")
    (proj / "src" / "main.cu").write_text('#include "kernels.cuh"\n'
                                          "int main() { cudaDeviceSynchronize(); }\n")
    return proj


def test_headers_reached_through_headers(tmp_path):
    proj = _tree(tmp_path)
    got = [f for f in findings("src/main.cu", cwd=proj) if f["code"] == "HIP005"]
    assert [(f["path"], f["line"]) for f in got] == [("src/main.cu", 1)]
    assert "`src/kernels.cuh` (and `include/common.h`, which it includes)" in got[0]["message"]
    assert "`cuda2hip fix src/kernels.cuh include/common.h`" in got[0]["message"]
    # a header named too reports what it brings in itself
    got = [f for f in findings("src/main.cu", "src/kernels.cuh", cwd=proj) if f["code"] == "HIP005"]
    assert [(f["path"], f["line"]) for f in got] == [("src/kernels.cuh", 2)]
    assert "`include/common.h`" in got[0]["message"]


def test_a_directory_names_the_files_below_it(tmp_path):
    proj = _tree(tmp_path)
    before = (proj / "include" / "common.h").read_text()
    proc = fix("--format", "concise", "src", cwd=proj)
    assert "hipDeviceSynchronize" in (proj / "src" / "kernels.cuh").read_text()
    assert "hipDeviceSynchronize" in (proj / "src" / "main.cu").read_text()
    assert (proj / "include" / "common.h").read_text() == before
    assert "src/kernels.cuh:2:1: HIP005" in proc.stdout, proc.stdout
    # an excluded header is not reported
    (proj / "cuda2hip.toml").write_text('exclude = ["include/"]\n')
    assert not [f for f in findings("src", cwd=proj) if f["code"] == "HIP005"]


def test_header_finding_is_suppressible_without_an_unused_suppression(llmc):
    cu = llmc / "gelu_forward.cu"
    cu.write_text(GELU_CU.replace('#include "common.h"\n', '#include "common.h"  // cuda2hip: ignore[HIP005]\n'))
    got = findings(cu.name, cwd=llmc)
    assert [f["suppressed"] for f in got if f["code"] == "HIP005"] == [True]
    assert "HIP001" not in [f["code"] for f in got]
    assert not [f for f in findings("--ignore", "HIP005", cu.name, cwd=llmc) if f["code"] in ("HIP005", "HIP001")]


@pytest.mark.skipif(shutil.which("patch") is None, reason="patch not installed (apt-get install patch)")
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_diff_is_exactly_what_fix_writes(tmp_path, newline):
    # A form feed (old C sources have them between sections) is no line break for a diff.
    text = ('#include <cuda_runtime.h>\n// section one\x0csection two\n'
            "int main() { cudaFree(0); }\n// no final newline").replace("\n", newline)
    for where in ("given", "applied"):
        (tmp_path / where).mkdir()
        (tmp_path / where / "a.cu").write_bytes(text.encode())
        (tmp_path / where / "cuda2hip.toml").write_text("")
    proc = subprocess.run([sys.executable, "-m", "cuda2hip", "fix", "--no-cache", "--diff", "a.cu"],
                          cwd=tmp_path / "given", capture_output=True)  # bytes: line breaks as written
    assert proc.returncode == 1 and proc.stdout
    fix("a.cu", cwd=tmp_path / "given")
    patched = subprocess.run(["patch", "-p1", "--binary", "-s"], input=proc.stdout, cwd=tmp_path / "applied",
                             capture_output=True)
    assert patched.returncode == 0, patched.stdout + patched.stderr
    assert (tmp_path / "applied" / "a.cu").read_bytes() == (tmp_path / "given" / "a.cu").read_bytes()


def test_a_header_of_no_file_type_is_reported_and_followed(tmp_path):
    """LightGBM names its CUDA headers `.hu`: a CUDA file type now. A header of no file type at
    all (`.inc`) that a CUDA file includes is C/C++ to the compiler: HIP005 reports it with the
    command that takes it in (naming it alone is refused as of no known type), and
    --follow-includes migrates it. (Before, both were silent: the unit failed at the header.)"""
    proj = tmp_path / "lightgbm"
    (proj / "include").mkdir(parents=True)
    (proj / "cuda2hip.toml").write_text("")
    (proj / "include" / "cuda_utils.hu").write_text(COMMON_H)
    (proj / "include" / "helpers.inc").write_text(COMMON_H.replace("cudaCheck", "cudaCheck2"))
    (proj / "a.cu").write_text('#include "include/cuda_utils.hu"\n' + GELU_CU.replace('#include "common.h"\n', ""))
    (proj / "b.cu").write_text('#include "include/helpers.inc"\n' + GELU_CU.replace('#include "common.h"\n', ""))
    checked = {f["path"] for f in findings(".", cwd=proj)}
    assert "include/cuda_utils.hu" in checked  # a file of the run, as .cuh is
    hip005 = [f for f in findings("b.cu", cwd=proj) if f["code"] == "HIP005"]
    assert len(hip005) == 1 and hip005[0]["line"] == 1, hip005
    assert "`include/helpers.inc`" in hip005[0]["message"] and "fix --follow-includes b.cu" in hip005[0]["message"]
    proc = fix("--follow-includes", "b.cu", cwd=proj)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "hipError_t" in (proj / "include" / "helpers.inc").read_text()
