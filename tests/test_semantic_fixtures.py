"""Realistic CUDA fixtures for the semantic rules (HIP3xx-HIP5xx): block reduction with shuffles,
scan, histogram with ballots, a stream pipeline, run-time hazards, unported constructs and
look-alikes.

For each fixture `fixtures/semantic/NAME/`:
- `input.cu` is valid CUDA (checked with nvcc where CUDA 13 accepts it);
- `findings.txt` / `findings-rocm-5.2.txt` list the HIP3xx-HIP5xx findings of `check` (opt-in
  HIP301 included; line:column code effort), without / with `--target-rocm 5.2`;
- `output.cu` / `output-rocm-5.2.cu` are the result of the full default migration
  (`fix --unsafe-fixes --extend-select HIP301`, without / with `--target-rocm 5.2`);
- the default output (the same as at `--target-rocm 7.2` and `6.4`) compiles with HIP 7.2 and 6.4
  (6.4 with -DHIP_ENABLE_WARP_SYNC_BUILTINS, as HIP403 reports there) and with HIP 5.2, which has
  no `_sync` warp functions: there with tests/harness/warp_sync_rocm62.h, which declares them with
  clr's 64-bit mask `static_assert`; the 5.2 output compiles with HIP 5.2 as it is.

Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli

pytestmark = pytest.mark.rules

SEMANTIC = FIXTURES / "semantic"
HARNESS = ROOT / "tests" / "harness" / "warp_sync_rocm62.h"
NAMES = sorted(p.name for p in SEMANTIC.iterdir() if (p / "input.cu").is_file())
UPDATE = os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1"
SEMANTIC_CODE = re.compile(r"^HIP[345]\d\d$")

NOT_CUDA_13 = {"unsupported": "texture references were removed in CUDA 12; nvcc 13 rejects `texture<...>`"}
# (fixture, variant, release) outputs that cannot compile there, and why (None: at every release)
NOT_COMPILABLE = {
    # reported for a manual port, never fixed
    ("unsupported", "default", None): "inline PTX, wmma and texture references have no automatic fix",
    ("unsupported", "rocm-5.2", None): "inline PTX, wmma and texture references have no automatic fix",
    # the fix needs a newer HIP: its --target-rocm 5.2 output is compiled instead
    ("legacy_stream", "default", "5.2"): "hipStreamLegacy needs ROCm 6.2",
    # reported (HIP409 at its line, in findings.txt), no automatic fix: clang 22 removed the
    # macro and warpSize is no constant expression
    ("hazards", "default", "7.2"): "__AMDGCN_WAVEFRONT_SIZE is gone from clang 22 (HIP409 reports it)",
    # Debian 12 (ROCm 5.2) packages no hipCUB
    ("warp_primitives", "default", "5.2"): "no hipCUB for ROCm 5.2 here (Debian 12 packages none)",
    ("warp_primitives", "rocm-5.2", "5.2"): "no hipCUB for ROCm 5.2 here (Debian 12 packages none)",
}
# The releases each output is compiled with, and the flags it needs there.
COMPILED_WITH = {
    ("default", "7.2"): [],
    ("default", "6.4"): ["-DHIP_ENABLE_WARP_SYNC_BUILTINS"],
    ("default", "5.2"): ["-include", str(HARNESS)],
    ("rocm-5.2", "5.2"): [],
}
VARIANTS = {"default": ("output.cu", []), "rocm-5.2": ("output-rocm-5.2.cu", ["--target-rocm", "5.2"])}
FINDINGS = {"default": "findings.txt", "rocm-5.2": "findings-rocm-5.2.txt"}
MIGRATE = ["fix", "--isolated", "--no-cache", "--unsafe-fixes", "--extend-select", "HIP301", "--stdout"]


def _migrate(path: Path, *extra: str) -> str:
    proc = run_cli(*MIGRATE, *extra, path)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def _expect(path: Path, got: str) -> None:
    if UPDATE:
        path.write_text(got)
    assert path.is_file(), f"{path} missing (run with CUDA2HIP_UPDATE_FIXTURES=1)"
    assert got == path.read_text(), f"{path.name} differs from the migration output"


def _semantic_findings(path: Path, *extra: str) -> list[str]:
    proc = run_cli("check", "--isolated", "--no-cache", "--extend-select", "HIP301", "--format", "json", *extra, path)
    assert proc.returncode in (0, 1), proc.stderr
    found = json.loads(proc.stdout)["findings"]
    return [f"{f['line']}:{f['column']} {f['code']} {f['effort']}" for f in found if SEMANTIC_CODE.match(f["code"])]


@pytest.mark.parametrize("name", NAMES)
def test_input_is_valid_cuda(name, nvcc):
    if name in NOT_CUDA_13:
        pytest.skip(NOT_CUDA_13[name])
    proc = nvcc(SEMANTIC / name / "input.cu")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", NAMES)
def test_findings(name, variant):
    got = _semantic_findings(SEMANTIC / name / "input.cu", *VARIANTS[variant][1])
    _expect(SEMANTIC / name / FINDINGS[variant], "".join(line + "\n" for line in got))


def test_lookalikes_stay_quiet():
    assert _semantic_findings(SEMANTIC / "lookalikes" / "input.cu") == []
    assert _semantic_findings(SEMANTIC / "lookalikes" / "input.cu", "--target-rocm", "5.2") == []


def test_every_semantic_rule_fires_on_a_fixture():
    seen = set()
    for name in NAMES:
        for filename in FINDINGS.values():
            for line in (SEMANTIC / name / filename).read_text().splitlines():
                seen.add(line.split()[1])
    proc = run_cli("rules", "--all", "--format", "json")
    codes = {r["code"] for r in json.loads(proc.stdout) if SEMANTIC_CODE.match(r["code"])}
    assert codes <= seen, sorted(codes - seen)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", NAMES)
def test_migrated_output(name, variant):
    filename, extra = VARIANTS[variant]
    got = _migrate(SEMANTIC / name / "input.cu", *extra)
    _expect(SEMANTIC / name / filename, got)
    # fix(fix(x)) == fix(x)
    assert _migrate(SEMANTIC / name / filename, *extra) == got


@pytest.mark.parametrize("variant,hipcc", [pytest.param(v, r, id=f"{v}-{r}") for v, r in COMPILED_WITH],
                         indirect=["hipcc"])
@pytest.mark.parametrize("name", NAMES)
def test_migrated_output_compiles(name, variant, hipcc):
    why = NOT_COMPILABLE.get((name, variant, None)) or NOT_COMPILABLE.get((name, variant, hipcc.release))
    if why:
        pytest.skip(why)
    filename, _ = VARIANTS[variant]
    proc = hipcc(SEMANTIC / name / filename, *COMPILED_WITH[variant, hipcc.release])
    assert proc.returncode == 0, proc.stderr


def test_rocm_5_2_output_has_no_sync_warp_functions():
    for name in NAMES:
        if (name, "rocm-5.2", None) in NOT_COMPILABLE:
            continue
        text = (SEMANTIC / name / "output-rocm-5.2.cu").read_text()
        assert not re.search(r"\b__\w+_sync\s*\(|__activemask|__syncwarp", text), name


@pytest.mark.parametrize("hipcc", ["7.2", "5.2"], indirect=True)
def test_harness_rejects_32_bit_masks(hipcc, tmp_path):
    """The negative control: without HIP402's fix the same code fails clr's mask check (HIP 7.2's
    own; at 5.2 the harness's)."""
    out = tmp_path / "reduction.cu"
    out.write_text(_migrate(SEMANTIC / "reduction" / "input.cu", "--ignore", "HIP402"))
    assert "0xffffffff\n" in out.read_text()
    proc = hipcc(out, *COMPILED_WITH["default", hipcc.release])
    assert proc.returncode != 0
    assert "The mask must be a 64-bit integer" in proc.stderr
