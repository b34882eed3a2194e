"""The migration target (`--target-rocm`, `target-rocm`): exactly the audited releases
(cuda2hip/rocm_releases.py), the newest by default, named by --help and by every report, and
followed by every finding whose truth depends on the release."""

from __future__ import annotations

import json
import re

import pytest

from conftest import ROOT, run_cli
from cuda2hip import rocm_releases

SRC = "#include <cuda_runtime.h>\n__global__ void k(float* p) { p[threadIdx.x] = 0.f; }\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.cu").write_text(SRC)
    return tmp_path


def test_the_default_is_the_newest_audited_release():
    assert rocm_releases.AUDITED == tuple(sorted(rocm_releases.AUDITED, key=rocm_releases.version_tuple))
    assert rocm_releases.DEFAULT == rocm_releases.AUDITED[-1] == "7.2"
    assert {"5.2", "6.4", "7.2"} <= set(rocm_releases.AUDITED)


@pytest.mark.parametrize("command", ["check", "fix"])
def test_help_names_the_releases_and_the_default(command):
    proc = run_cli(command, "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "--target-rocm [" + "|".join(rocm_releases.AUDITED) + "]" in text
    assert f"default: {rocm_releases.DEFAULT}" in text


@pytest.mark.parametrize("value", ["9.9", "6.2", "7", "latest", ""])
def test_other_releases_are_refused_with_the_list(project, value):
    proc = run_cli("check", "--isolated", "--target-rocm", value, "a.cu", cwd=project)
    assert proc.returncode == 2
    for release in rocm_releases.AUDITED:
        assert f"'{release}'" in proc.stderr, proc.stderr


def test_the_configuration_pins_the_target(project):
    (project / "cuda2hip.toml").write_text('target-rocm = "5.2"\n')
    proc = run_cli("check", "--format", "json", "a.cu", cwd=project)
    assert json.loads(proc.stdout)["summary"]["target_rocm"] == "5.2"
    # the command line wins
    proc = run_cli("check", "--format", "json", "--target-rocm", "6.4", "a.cu", cwd=project)
    assert json.loads(proc.stdout)["summary"]["target_rocm"] == "6.4"


@pytest.mark.parametrize("line, hint", [
    ("target-rocm = 7.2", 'write the release as a string, target-rocm = "7.2"'),
    ("target-rocm = 6", 'target-rocm = "6"'),
    ('target-rocm = "6.2"', "choose one of " + rocm_releases.listing()),
    ('target-rocm = "latest"', "choose one of " + rocm_releases.listing()),
])
def test_the_configuration_refuses_other_values(project, line, hint):
    (project / "cuda2hip.toml").write_text(line + "\n")
    proc = run_cli("check", "a.cu", cwd=project)
    assert proc.returncode == 2 and hint in proc.stderr, proc.stderr


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif", "markdown", "html", "junit"])
def test_every_report_names_the_target(project, fmt):
    for target in ("5.2", None):
        args = ["--target-rocm", target] if target else []
        want = target or rocm_releases.DEFAULT
        proc = run_cli("check", "--isolated", "--no-cache", "--format", fmt, *args, "a.cu", cwd=project)
        assert proc.returncode in (0, 1), proc.stderr
        out = proc.stdout
        if fmt == "json":
            assert json.loads(out)["summary"]["target_rocm"] == want
        elif fmt == "sarif":
            props = json.loads(out)["runs"][0]["properties"]
            assert props["targetRocm"] == want and props["summary"]["target_rocm"] == want
        elif fmt == "html":
            assert re.search(rf'data-summary="target-rocm">ROCm {re.escape(want)}<', out)
        elif fmt == "junit":
            assert f'<property name="target-rocm" value="{want}" />' in out
        else:
            assert f"ROCm {want}" in out


def test_statistics_name_the_target(project):
    proc = run_cli("check", "--isolated", "--no-cache", "--statistics", "a.cu", cwd=project)
    assert f"total at target ROCm {rocm_releases.DEFAULT}" in proc.stdout


def test_fix_report_names_the_target(project):
    proc = run_cli("fix", "--isolated", "--no-cache", "--report", "r.md", "--target-rocm", "6.4", "a.cu", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Target: ROCm 6.4" in (project / "r.md").read_text()


def test_documentation_names_the_default():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"default {rocm_releases.DEFAULT}" in readme or f"default: {rocm_releases.DEFAULT}" in readme
    assert rocm_releases.listing() in readme
    audit = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    for release in rocm_releases.AUDITED:
        assert f"### ROCm {release}" in audit


# ------------------------------------------------------------ findings that follow the target

WARP = "__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"


def _codes(tmp_path, source: str, *args: str) -> list[tuple[str, str]]:
    (tmp_path / "w.cu").write_text(source)
    proc = run_cli("check", "--isolated", "--no-cache", "--format", "json", *args, "w.cu", cwd=tmp_path)
    return [(f["code"], f["message"]) for f in json.loads(proc.stdout)["findings"]]


@pytest.mark.parametrize("target, want, lacks", [
    ("5.2", "HIP403", "HIP402"),  # no _sync functions at all
    ("6.4", "HIP403", None),  # only with -DHIP_ENABLE_WARP_SYNC_BUILTINS (and the mask is 64-bit there)
    ("7.2", "HIP402", "HIP403"),  # declared by default: the 32-bit mask fails the static_assert
])
def test_warp_sync_findings_follow_the_target(tmp_path, target, want, lacks):
    codes = _codes(tmp_path, WARP, "--target-rocm", target)
    assert want in {c for c, _ in codes}, codes
    if lacks:
        assert lacks not in {c for c, _ in codes}, codes
    if target == "6.4":
        assert any("-DHIP_ENABLE_WARP_SYNC_BUILTINS" in m for c, m in codes if c == "HIP403")


def test_default_target_is_7_2_for_the_warp_functions(tmp_path):
    assert {c for c, _ in _codes(tmp_path, WARP)} >= {"HIP402"}
    assert "HIP403" not in {c for c, _ in _codes(tmp_path, WARP)}


BF16 = "#include <cuda_bf16.h>\n__global__ void k(__nv_bfloat16* o) { o[0] = __float2bfloat16(1.f); }\n"


@pytest.mark.parametrize("target", rocm_releases.AUDITED)
def test_bf16_follows_the_target(tmp_path, target):
    (tmp_path / "b.cu").write_text(BF16)
    proc = run_cli("fix", "--isolated", "--no-cache", "--stdout", "--target-rocm", target, "b.cu", cwd=tmp_path)
    if target == "5.2":  # hip/hip_bf16.h is from ROCm 5.7 on
        assert "__nv_bfloat16" in proc.stdout and "cuda_bf16.h" in proc.stdout
    else:
        assert "#include <hip/hip_bf16.h>" in proc.stdout and "__hip_bfloat16" in proc.stdout


BLAS = ("#include <cublas_v2.h>\n"
        "void f(cublasHandle_t h, int n, const cuComplex* a, const cuComplex* x, cuComplex* y) {\n"
        "  cublasCaxpy(h, n, a, x, 1, y, 1);\n}\n")


@pytest.mark.parametrize("target, name", [("6.4", "hipblasCaxpy_v2"), ("7.2", "hipblasCaxpy")])
def test_hipblas_complex_functions_follow_the_target(tmp_path, target, name):
    """hipBLAS 3 (ROCm 7.x) dropped the `_v2` functions HIPIFY maps cuBLAS's complex ones to and
    gave the plain names the `hipFloatComplex` signatures: at 7.2 the call becomes the plain name,
    never a `_v2` name 7.2 lacks."""
    (tmp_path / "c.cu").write_text(BLAS)
    proc = run_cli("fix", "--isolated", "--no-cache", "--stdout", "--target-rocm", target, "c.cu", cwd=tmp_path)
    assert f"{name}(" in proc.stdout, proc.stdout
    if target == "7.2":
        assert "_v2(" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("target, legacy", [("5.2", True), ("6.4", False), ("7.2", False)])
def test_legacy_stream_follows_the_target(tmp_path, target, legacy):
    src = "void f(int* d) { cudaStreamSynchronize(cudaStreamLegacy); }\n"
    assert ("HIP305" in {c for c, _ in _codes(tmp_path, src, "--target-rocm", target)}) is legacy


def test_a_rules_own_names_need_no_version(tmp_path):
    """A project's rename rule (`names:` without `hip_added`) vouches for its names: they are written
    at every target (regression: with the default target, "no ROCm version known" refused them)."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "mine.yaml").write_text(
        "code: HIP901\nid: my-renames\nkind: rename\nseverity: warning\nsummary: ours\n"
        "message: \"`$NAME` -> `$HIP`\"\nfix:\n  applicability: safe\nnames:\n  myCudaAlloc: myHipAlloc\n"
        "docs:\n  what: Renames our allocator.\n  why: Our HIP build has its own.\n")
    (tmp_path / "cuda2hip.toml").write_text('rule-dirs = ["rules"]\nselect = ["HIP901"]\n')
    (tmp_path / "a.cu").write_text("void f() { myCudaAlloc(); }\n")
    for target in rocm_releases.AUDITED:
        proc = run_cli("fix", "--no-cache", "--stdout", "--target-rocm", target, "a.cu", cwd=tmp_path)
        assert "myHipAlloc();" in proc.stdout, (target, proc.stdout, proc.stderr)


def test_the_top_level_help_names_the_default():
    text = " ".join(run_cli("--help").stdout.split())
    assert f"The target is ROCm {rocm_releases.DEFAULT} unless --target-rocm" in text
    assert rocm_releases.listing() in text
