"""Issue 12: collisions after migration, on multi-file fixtures (fixtures/collisions/NAME/).

- `rename`: overloads that renaming joins (HIP140): `cudaError_t`/`CUresult` helpers with the same
  and with different bodies, a pair split between a header and the file including it, a
  `CUdeviceptr`/`void *` pair, a pair in exclusive branches (left alone);
- `vector_ops`: definitions HIP's own headers clash with (HIP141): helper_math-style compound
  operators (component-wise: safe), a complex product written as `float2 *=` (not: unsafe),
  host `min`/`max` outside nvcc's branch, and the operators and `make_*` variants that do not
  clash (binary operators, scalar compound operators, one-argument `make_float3`).

Each input is valid CUDA (nvcc); `expected/` is `fix --target-rocm 5.2`, `expected-unsafe/` the
same with `--unsafe-fixes`; `findings.txt` lists HIP140/HIP141 of `check` on the input. The unsafe
output compiles with hipcc; the default output fails only where `check` on it reports the
failure (the yardstick of bench/real_world.py); without HIP140/HIP141 the compile fails. The same
holds at 7.2 and 6.4 for the input migrated with that target and compiled with that release
(the negative control and the golden trees are HIP 5.2's).
Set CUDA2HIP_UPDATE_FIXTURES=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, release_params, run_cli

pytestmark = pytest.mark.rules

BASE = FIXTURES / "collisions"
NAMES = sorted(p.name for p in BASE.iterdir() if (p / "input").is_dir())
VARIANTS = {"default": ("expected", []), "unsafe": ("expected-unsafe", ["--unsafe-fixes"])}
UPDATE = os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1"
CODES = ("HIP140", "HIP141")
FIX = ["fix", "--isolated", "--no-cache", "--target-rocm", "5.2"]
# Rule gaps that make the output of a release fail (xfail, strict: the fix turns them into passes).
GAPS: dict[tuple[str, str], str] = {}
DIAG = re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):\d+: (?:fatal )?error: (?P<msg>.*)$", re.M)


def _migrate(name: str, tmp_path: Path, *extra: str, target: str = "5.2") -> Path:
    out = tmp_path / f"{name}-out"
    proc = run_cli(*FIX[:-1], target, *extra, "--output-dir", out, BASE / name / "input")
    assert proc.returncode in (0, 1), proc.stderr
    return out


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _findings(path: Path, *codes: str, target: str = "5.2") -> list[dict]:
    proc = run_cli("check", "--isolated", "--no-cache", "--target-rocm", target, "--format", "json", path)
    assert proc.returncode in (0, 1), proc.stderr
    return [f for f in json.loads(proc.stdout)["findings"] if not codes or f["code"] in codes]


def _compile(hipcc, tree: Path, tmp_path: Path):
    unit = tmp_path / "main.hip"
    shutil.copy(tree / "main.cu", unit)
    return hipcc(unit, f"-I{tree}", "-std=c++17", "-fno-spell-checking")


@pytest.mark.parametrize("name", NAMES)
def test_input_is_valid_cuda(name, nvcc):
    proc = nvcc(BASE / name / "input" / "main.cu", f"-I{BASE / name / 'input'}", "-std=c++17")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", NAMES)
def test_migrated_tree(name, variant, tmp_path):
    folder, extra = VARIANTS[variant]
    got = _files(_migrate(name, tmp_path, *extra))
    want_dir = BASE / name / folder
    if UPDATE:
        shutil.rmtree(want_dir, ignore_errors=True)
        for rel, text in got.items():
            (want_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (want_dir / rel).write_text(text)
    assert got == _files(want_dir)
    # fix(fix(x)) == fix(x)
    again = tmp_path / "again"
    proc = run_cli(*FIX, *extra, "--output-dir", again, want_dir)
    assert proc.returncode in (0, 1), proc.stderr
    assert _files(again) == got


@pytest.mark.parametrize("name", NAMES)
def test_findings_on_the_input(name):
    root = BASE / name / "input"
    got = sorted(f"{Path(f['path']).resolve().relative_to(root.resolve())}:{f['line']}:{f['column']} {f['code']} {f['severity']}"
                 for f in _findings(root, *CODES))
    path = BASE / name / "findings.txt"
    if UPDATE:
        path.write_text("".join(line + "\n" for line in got))
    assert got == path.read_text().splitlines()


def _output(name: str, variant: str, release: str, tmp_path: Path) -> Path:
    """The golden tree at 5.2; at another release, the input migrated for it."""
    folder, extra = VARIANTS[variant]
    return BASE / name / folder if release == "5.2" else _migrate(name, tmp_path, *extra, target=release)


@pytest.mark.parametrize("name,hipcc", release_params(NAMES, GAPS), indirect=["hipcc"])
def test_unsafe_output_compiles(name, hipcc, tmp_path):
    proc = _compile(hipcc, _output(name, "unsafe", hipcc.release, tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name,hipcc", release_params(NAMES, GAPS), indirect=["hipcc"])
def test_default_output_fails_only_where_reported(name, hipcc, tmp_path):
    """What the safe fixes leave fails only where `check` reports it: each error has a warning or
    error at its line, or in its file naming the construct it quotes (bench/real_world.py's
    'predicted')."""
    tree = _output(name, "default", hipcc.release, tmp_path)
    proc = _compile(hipcc, tree, tmp_path)
    errors = [m for m in DIAG.finditer(proc.stderr)]
    assert proc.returncode != 0 and errors, "the default output was expected to keep an unsafe collision"
    findings = [f for f in _findings(tree, target=hipcc.release) if f["severity"] in ("warning", "error")]
    for err in errors:
        path = Path(err["path"])
        rel = "main.cu" if path.name == "main.hip" else str(path.resolve().relative_to(tree.resolve()))
        here = [f for f in findings if Path(f["path"]).resolve() == (tree / rel).resolve()]
        quoted = set(re.findall(r"'([A-Za-z_]\w*)'", err["msg"]))
        assert any(f["line"] == int(err["line"]) or quoted & set(re.findall(r"\w+", f["message"])) for f in here), \
            f"unreported: {err.group(0)}"


@pytest.mark.parametrize("name", NAMES)
def test_without_the_rules_the_output_does_not_compile(name, hipcc, tmp_path):
    """Negative control: the collisions are real for hipcc."""
    out = _migrate(name, tmp_path, "--unsafe-fixes", "--ignore", ",".join(CODES))
    proc = _compile(hipcc, out, tmp_path)
    assert proc.returncode != 0
    assert re.search(r"redefinition of|is ambiguous|cannot overload", proc.stderr), proc.stderr


@pytest.mark.integration
def test_guarded_operators_mean_what_hips_members_do(tmp_path):
    """The operators HIP141 guards as safe give, as HIP's members, the same bits for every value
    tried (infinities, NaN, signed zeros, extremes), run on the host with hipcc."""
    exe = shutil.which("hipcc")
    if exe is None:
        pytest.skip("hipcc not installed (apt-get install hipcc libamdhip64-dev)")
    cases = []
    for vec, scalar in (("float3", "float"), ("double2", "double"), ("int4", "int"), ("uint2", "unsigned")):
        n = int(vec[-1])
        comps = "xyzw"[:n]
        for op in ("+=", "-=", "*=", "/="):
            body = " ".join(f"a.{c} {op} b.{c};" for c in comps)
            cases.append((vec, scalar, op, f"inline void apply(Tag<{len(cases)}>, {vec} &a, {vec} b) {{ {body} }}"))
    src = ["#include <hip/hip_runtime.h>", "#include <cmath>", "#include <cstdio>", "#include <cstring>",
           "template <int> struct Tag {};"]
    src += [c[3] for c in cases]
    src.append("static const float F[] = {0.f, -0.f, 1.f, -1.5f, 3.4e38f, -3.4e38f, 1e-45f, INFINITY, -INFINITY, NAN};")
    src.append("static const int I[] = {0, 1, -1, 7, -8, 46340, -46341};")
    src.append("int main() { int bad = 0;")
    for i, (vec, scalar, op, _) in enumerate(cases):
        values = "F" if scalar in ("float", "double") else "I"
        n = int(vec[-1])
        src.append(f"for (auto u : {values}) for (auto v : {values}) {{ if ({'true' if values == 'F' else 'v != 0'} || "
                   f"{'false' if op == '/=' else 'true'}) {{ {vec} a = make_{vec}({', '.join(['(' + scalar + ')u'] * n)}),"
                   f" b = make_{vec}({', '.join(['(' + scalar + ')v'] * n)}); {vec} p = a, q = a;"
                   f" apply(Tag<{i}>(), p, b); q {op} b; bad += memcmp(&p, &q, sizeof p) != 0; }} }}")
    src.append('printf("%d\\n", bad); return bad != 0; }')
    prog = tmp_path / "same.hip"
    prog.write_text("\n".join(src) + "\n")
    env = dict(os.environ, HIP_PLATFORM="amd")
    build = subprocess.run([exe, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-w", str(prog), "-o",
                            str(tmp_path / "same")], capture_output=True, text=True, env=env)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(tmp_path / "same")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "0", run.stdout + run.stderr
