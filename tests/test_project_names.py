"""HIP190: a CUDA-looking name the project defines anywhere in the run is the project's in every
file of the run (llm.c's `cudaCheck`, defined in `cuda_common.h` and used by headers that do not
include it), whether the files run in this process, in worker processes or come from the result
cache; and a cached result never carries another file's definitions."""

from __future__ import annotations

import pytest

from cuda2hip.engine.engine import Engine
from cuda2hip.pipeline import Mode, run
from cuda2hip.run.workers import PARALLEL_THRESHOLD
from cuda2hip.settings import Settings

COMMON = """#pragma once
#include <cuda_runtime.h>
#include <cstdio>
inline void cudaCheck_(cudaError_t error, const char* file, int line) {
  if (error != cudaSuccess) printf("%s:%d\\n", file, line);
}
#define cudaCheck(err) (cudaCheck_(err, __FILE__, __LINE__))
"""
# uses cudaCheck without including cuda_common.h: the .cu file includes both, in this order
LAYERNORM = """#pragma once
void layernorm_forward(float* out, int n) {
  cudaCheck(cudaMemset(out, 0, n));
  cudaCheck(cudaGetLastError());
}
"""
TRAIN = """#include "llmc/cuda_common.h"
#include "llmc/layernorm.cuh"
int main() { float* p; cudaCheck(cudaMalloc(&p, 4)); layernorm_forward(p, 1); }
"""


def _tree(root, fillers: int = 0):
    (root / ".git").mkdir()
    (root / "llmc").mkdir()
    (root / "llmc" / "cuda_common.h").write_text(COMMON)
    (root / "llmc" / "layernorm.cuh").write_text(LAYERNORM)
    (root / "train.cu").write_text(TRAIN)
    for i in range(fillers):
        (root / f"kernel{i}.cu").write_text(f"__global__ void k{i}(float* x) {{ x[threadIdx.x] = {i}; }}\n")


def _hip190(root, **settings):
    s = Settings(root=root, select=("HIP190",), **settings)
    result = run([str(root)], s, Mode.CHECK, Engine(s))
    return sorted((f.path.rsplit("/", 1)[-1], f.line, f.severity.label) for f in result.findings)


DEFINED_ONLY = [("cuda_common.h", 4, "info"), ("cuda_common.h", 7, "info")]


def test_a_name_defined_in_another_file_of_the_run_is_the_projects(tmp_path):
    _tree(tmp_path)
    assert _hip190(tmp_path, use_cache=False, jobs=1) == DEFINED_ONLY


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_same_with_workers_and_from_the_result_cache(tmp_path, monkeypatch, jobs):
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root, fillers=PARALLEL_THRESHOLD)
    assert _hip190(root, jobs=jobs) == DEFINED_ONLY  # computed (by workers with jobs=2)
    assert _hip190(root, jobs=jobs) == DEFINED_ONLY  # every file from the cache


def test_a_cached_result_does_not_keep_a_definition_that_went_away(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root)
    assert _hip190(root, jobs=1) == DEFINED_ONLY
    # cudaCheck is no longer defined anywhere; layernorm.cuh (unchanged: served by the cache)
    # now uses an unknown CUDA name
    (root / "llmc" / "cuda_common.h").write_text(COMMON.replace("#define cudaCheck", "#define cudaCheckX"))
    got = _hip190(root, jobs=1)
    assert ("layernorm.cuh", 3, "warning") in got and ("layernorm.cuh", 4, "warning") in got
