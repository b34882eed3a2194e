"""The reduced real-world corpus (bench/realworld/corpus.toml, `reduced` units): public CUDA code
nobody here wrote, at each ROCm release R (7.2, 6.4, 5.2) migrated with `cuda2hip fix --output-dir
--target-rocm R` and compiled with R's hipcc (tests/harness/hip_toolchains.py). Every nvcc-valid
unit that does not build must be predicted by a finding at its first error, the units listed in
`must_compile` must build, and a second fix must change nothing.

The corpus is downloaded by `python bench/real_world.py --fetch-only` (.ci/run does it); the full
run is `python bench/real_world.py` (a benchmark, docs/real-world.md).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from conftest import (CUDA_LIBRARY_INCLUDE, FETCH_CUDA_HEADERS, FETCH_ROCM_HEADERS, ROCM_LIBRARY_INCLUDE, ROOT,
                      hip_compiler)

sys.path.insert(0, str(ROOT / "bench"))
from realworld import config, harness  # noqa: E402

import real_world  # noqa: E402
from hip_toolchains import RELEASES  # noqa: E402

pytestmark = pytest.mark.integration

SOURCES, CODEBASES = config.load()
FETCH = "python bench/real_world.py --fetch-only"


def _source_root(codebase):
    root = real_world.CACHE / "sources" / codebase.source
    if not (root / ".fetched").is_file():
        pytest.skip(f"real-world corpus not fetched: {FETCH}")
    return root


@pytest.fixture(scope="module")
def paths():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    if not CUDA_LIBRARY_INCLUDE.is_dir():
        pytest.skip(f"CUDA library headers not fetched: {FETCH_CUDA_HEADERS}")
    return harness.Paths(real_world.CACHE, CUDA_LIBRARY_INCLUDE)


# (code base slug, release) whose reduced units fail silently there: a rule gap, named.
GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("codebase,release", [
    pytest.param(c, r, id=f"{c.slug}-{r}", marks=[pytest.mark.xfail(strict=True, reason=GAPS[c.slug, r])]
                 if (c.slug, r) in GAPS else [])
    for c in CODEBASES if c.reduced for r in RELEASES])
def test_reduced_corpus_builds_or_is_predicted(codebase, release, paths):
    toolchain = hip_compiler(release).toolchain  # skips, saying why, when the release is absent
    if release == "5.2" and not ROCM_LIBRARY_INCLUDE.is_dir():
        pytest.skip(f"ROCm library headers not fetched: {FETCH_ROCM_HEADERS}")
    # A label of this process: checkouts that share .cache (worktrees) may run the test at once,
    # and each run rebuilds its output tree. Compile results are cached by content, not by label.
    label = f"test-reduced-{os.getpid()}"
    try:
        result = harness.run_codebase(codebase, _source_root(codebase), paths, ROOT, label, jobs=2,
                                      toolchain=toolchain, reduced=True, log=lambda _: None)
    finally:
        shutil.rmtree(real_world.CACHE / "work" / codebase.slug / "out" / label, ignore_errors=True)
    assert result.units == len(codebase.reduced), "a reduced unit is missing from the code base"
    silent = [f"{f.unit}: {f.first_error}" for f in result.failures if f.silent]
    assert not silent, "failures no finding predicts:\n" + "\n".join(silent)
    failed = {f.unit for f in result.failures}
    assert not failed & set(codebase.must_compile), f"must compile: {sorted(failed & set(codebase.must_compile))}"
    assert not result.refix_changed, f"a second fix changes {result.refix_changed}"
