"""End-to-end behaviour of the semantic rules through the CLI and with the real compilers:
opt-in and options of HIP301, --target-rocm behaviour of the warp rules, and the default-stream
flag mapping the build-file migrations reuse."""

from __future__ import annotations

import json

import pytest

from conftest import AT_EVERY_RELEASE
from cuda2hip.checks.streams.streams import DEFAULT_STREAM_FLAGS, hip_default_stream_flag

pytestmark = pytest.mark.rules

COPY = """#include <cuda_runtime.h>
void upload(float* d, const float* h, size_t n) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
}
"""


@pytest.mark.parametrize("args,flag", [
    (["nvcc", "--default-stream", "per-thread", "-c", "a.cu"], "-fgpu-default-stream=per-thread"),
    (["nvcc", "--default-stream=legacy"], "-fgpu-default-stream=legacy"),
    (["nvcc", "-default-stream", "null"], "-fgpu-default-stream=legacy"),
    (["nvcc", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM", "a.cu"], "-fgpu-default-stream=per-thread"),
    (["nvcc", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"], "-fgpu-default-stream=per-thread"),
    (["nvcc", "--default-stream", "per-thread", "--default-stream", "legacy"], "-fgpu-default-stream=legacy"),
    (["nvcc", "-O2", "a.cu"], None),
])
def test_default_stream_flag_mapping(args, flag):
    assert hip_default_stream_flag(args) == flag


@AT_EVERY_RELEASE
@pytest.mark.parametrize("flag", sorted(set(DEFAULT_STREAM_FLAGS.values())))
def test_mapped_default_stream_flags_are_accepted_by_hipcc(flag, hipcc, tmp_path):
    src = tmp_path / "k.hip"
    src.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* d) { d[0] = 1; }\n"
                   "void run(float* d) { k<<<1, 1>>>(d); hipMemcpy(d, d, 4, hipMemcpyDeviceToDevice); }\n")
    proc = hipcc(src, flag)
    assert proc.returncode == 0, proc.stderr


def test_blocking_copy_rule_is_opt_in_and_unsafe(cli, tmp_path):
    rules = {r["code"]: r for r in json.loads(cli("rules", "--all", "--format", "json").stdout)}
    assert rules["HIP301"]["enabled"] is False and rules["HIP301"]["fix"] == "unsafe"
    src = tmp_path / "copy.cu"
    src.write_text(COPY)
    default = cli("check", "--isolated", "--format", "json", src)
    assert "HIP301" not in {f["code"] for f in json.loads(default.stdout)["findings"]}
    selected = cli("check", "--isolated", "--extend-select", "HIP301", "--format", "json", src)
    found = [f for f in json.loads(selected.stdout)["findings"] if f["code"] == "HIP301"]
    assert len(found) == 1 and "`s`, the only stream in scope" in found[0]["message"]
    safe_only = cli("fix", "--isolated", "--extend-select", "HIP301", "--stdout", src)
    assert "MemcpyAsync" not in safe_only.stdout and "hipMemcpy(d, h, n" in safe_only.stdout
    unsafe = cli("fix", "--isolated", "--extend-select", "HIP301", "--unsafe-fixes", "--stdout", src)
    assert "hipMemcpyAsync(d, h, n, hipMemcpyHostToDevice, s);\n  hipStreamSynchronize(s);" in unsafe.stdout


def test_blocking_copy_stream_option_from_config(cli, tmp_path):
    (tmp_path / "cuda2hip.toml").write_text(
        'extend-select = ["HIP301"]\nunsafe-fixes = true\n'
        '[rule-options.HIP301]\nstream = "uploadStream"\nprefer-scope-stream = false\n')
    src = tmp_path / "copy.cu"
    src.write_text(COPY)
    proc = cli("fix", "--unsafe-fixes", "--stdout", src, cwd=tmp_path)
    assert "hipMemcpyAsync(d, h, n, hipMemcpyHostToDevice, uploadStream);" in proc.stdout
    assert "hipStreamSynchronize(uploadStream);" in proc.stdout


def test_blocking_copy_docs_say_it_is_a_refactoring(cli):
    out = cli("explain", "HIP301").stdout
    assert "refactoring toward explicit streams, not a correctness fix" in out
    assert "returns only after the copy has completed" in out


WARP = """#include <cuda_runtime.h>
__global__ void k(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_xor_sync(0xffffffff, v, 1);
  x[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("target,code,expect", [
    (None, "HIP402", "__shfl_xor_sync(0xffffffffffffffffull, v, 1)"),  # the default target, 7.2
    ("7.2", "HIP402", "__shfl_xor_sync(0xffffffffffffffffull, v, 1)"),
    # 6.4: behind -DHIP_ENABLE_WARP_SYNC_BUILTINS; a full mask becomes the maskless builtin HIP's _sync runs
    ("6.4", "HIP402", "__shfl_xor(v, 1)"),
    ("5.2", "HIP403", "__shfl_xor(v, 1)"),
])
def test_warp_sync_rules_follow_target_rocm(cli, tmp_path, target, code, expect):
    src = tmp_path / "w.cu"
    src.write_text(WARP)
    extra = ["--target-rocm", target] if target else []
    found = json.loads(cli("check", "--isolated", "--format", "json", *extra, src).stdout)["findings"]
    codes = {f["code"] for f in found}
    assert code in codes and ({"HIP402", "HIP403"} - {code}) & codes == (
        {"HIP403"} if target == "6.4" else set())
    fixed = cli("fix", "--isolated", "--unsafe-fixes", "--stdout", *extra, src).stdout
    assert expect in fixed
    if target == "6.4":
        msg = [f["message"] for f in found if f["code"] == "HIP403"][0]
        assert "-DHIP_ENABLE_WARP_SYNC_BUILTINS" in msg
    if target == "5.2":
        assert "has no `_sync` warp functions" in [f["message"] for f in found if f["code"] == "HIP403"][0]


@pytest.mark.parametrize("target", ["5.2", "6.4"])
def test_one_warp_sync_call_gets_one_availability_finding(cli, tmp_path, target):
    """HIP102 ("needs ROCm 7.0.0", from the name tables) and HIP403 used to report the same
    `__shfl_xor_sync`; HIP403's finding says it once, with both facts."""
    src = tmp_path / "w.cu"
    src.write_text(WARP)
    found = json.loads(cli("check", "--isolated", "--format", "json", "--target-rocm", target, src).stdout)["findings"]
    line = WARP.splitlines().index("  v += __shfl_xor_sync(0xffffffff, v, 1);") + 1
    at_call = [f for f in found if f["line"] == line and f["code"] in ("HIP102", "HIP403")]
    assert [f["code"] for f in at_call] == ["HIP403"]
    assert "ROCm 7.0" in at_call[0]["message"] and "-DHIP_ENABLE_WARP_SYNC_BUILTINS" in at_call[0]["message"]


def test_default_stream_mapping_agrees_with_the_build_flag_table():
    """The source rules (HIP302) and the build-file flag rules must map nvcc's setting alike."""
    import yaml

    from conftest import ROOT

    table = yaml.safe_load((ROOT / "rules" / "build" / "data" / "nvcc-flags.yaml").read_text())
    entry = next(e for e in table if "--default-stream" in e["names"])
    assert entry["values"] == DEFAULT_STREAM_FLAGS
