"""Preprocessor conditions: three-valued evaluation and the branches hip-clang or a CUDA build compile."""

import pytest

from cuda2hip import parse
from cuda2hip.match import preproc_conditions as pc


def _condition(expr: str):
    data = f"#if {expr}\nint x;\n#endif\n".encode()
    tree = parse.parse("cuda", data)
    return tree.root_node.named_children[0].child_by_field_name("condition"), data


@pytest.mark.parametrize("expr, arch, want", [
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", 500, True),
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", None, False),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 200", None, True),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 200", 750, True),
    ("__CUDA_ARCH__ >= 0x2BC", 700, True),
    ("__CUDA_ARCH__ == 010", 8, True),  # octal
    ("defined(__NVCC__) && !defined(__CUDA_ARCH__)", None, False),  # hip-clang: no __NVCC__
    ("__CUDACC_VER_MAJOR__ > 9 && __CUDA_ARCH__ >= 530", 900, False),
    ("__CUDACC_VER_MAJOR__ < 11", None, True),  # undefined is 0
    ("__CUDA_ARCH__ >= GGML_CUDA_CC_VOLTA", 700, None),  # a project macro: cannot tell
    ("PROJECT_FLAG || defined(__HIP__)", None, True),
    ("PROJECT_FLAG && !defined(__HIP__)", None, False),
    ("__has_include(<cuda_fp16.h>)", None, None),
])
def test_truth_under_hip_clang(expr, arch, want):
    cond, data = _condition(expr)
    assert pc.truth(cond, data, pc.with_cuda_arch(pc.hip_clang, arch)) is want


@pytest.mark.parametrize("name, want", [
    ("__HIP_PLATFORM_AMD__", True), ("__HIP__", True), ("HIP_VERSION", True), ("__gfx90a__", True),
    ("GGML_USE_HIP", True), ("USE_ROCM", True), ("AMD_MFMA_AVAILABLE", True),
    # what the migration writes stays CUDA code: __CUDACC__ -> __HIPCC__, CUDART_INF -> HIP_INF,
    # __CUDA_ARCH__ presence tests -> __HIP_DEVICE_COMPILE__
    ("__HIPCC__", False), ("HIP_INF", False), ("__HIP_DEVICE_COMPILE__", False),
    ("RDNA3", False), ("GGML_CUDA_CC_VOLTA", False), ("SHIPPING", False),
])
def test_hip_switches(name, want):
    assert pc.is_hip_switch(name) is want


SOURCE = b"""\
#if defined(GGML_USE_HIP) && defined(CDNA)
int amd_only;
#elif defined(__NVCC__)
int nvcc_only;
#else
int cuda_code;
#endif
#ifndef __HIP_PLATFORM_AMD__
int not_amd;
#endif
void f() {
#ifdef __HIPCC__
  int migrated;
#endif
}
"""


@pytest.mark.parametrize("word, kinds", [
    (b"amd_only", {"hip-only"}), (b"nvcc_only", {"nvcc-only"}), (b"cuda_code", set()), (b"not_amd", set()),
    (b"migrated", set()),
])
def test_branch_kinds(word, kinds):
    tree = parse.parse("cuda", SOURCE)
    assert pc.branch_kinds(tree, SOURCE, SOURCE.index(word)) == kinds


def test_a_condition_is_not_under_its_own_branch():
    tree = parse.parse("cuda", SOURCE)
    assert pc.branch_tests(tree, SOURCE.index(b"GGML_USE_HIP")) == []
    (node, wanted), = pc.branch_tests(tree, SOURCE.index(b"__NVCC__"))
    assert node.type == "preproc_if" and wanted is False  # an #elif is reached when the #if was false
