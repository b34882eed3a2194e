"""The definitions HIP133's fix writes for CUDA device functions HIP lacks
(rules/api/data/device-polyfills.yaml) compute what CUDA documents: each is compiled for the host
with the system's C++ compiler and compared, lane by lane, with a model of the CUDA Math API's
description on values chosen to reach every lane's carry, borrow and equality cases."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from cuda2hip.checks.api.device_functions import polyfills

CXX = shutil.which("g++") or shutil.which("c++")


def _lanes(x: int, width: int) -> list[int]:
    return [(x >> i) & ((1 << width) - 1) for i in range(0, 32, width)]


def _pack(values: list[int], width: int) -> int:
    return sum((v & ((1 << width) - 1)) << (i * width) for i, v in enumerate(values))


# CUDA Math API, SIMD intrinsics: partial results modulo the lane size; comparisons give all ones
MODEL = {
    "__vadd2": (16, lambda a, b: a + b), "__vsub2": (16, lambda a, b: a - b),
    "__vadd4": (8, lambda a, b: a + b), "__vsub4": (8, lambda a, b: a - b),
    "__vcmpeq2": (16, lambda a, b: -1 if a == b else 0), "__vcmpne2": (16, lambda a, b: -1 if a != b else 0),
    "__vcmpeq4": (8, lambda a, b: -1 if a == b else 0), "__vcmpne4": (8, lambda a, b: -1 if a != b else 0),
}


def _inputs() -> list[tuple[int, int]]:
    rng = random.Random(30)
    pairs = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(4000)]
    # equal lanes next to different ones, and the lane boundaries of carries and borrows
    pairs += [(a, a ^ (rng.getrandbits(8) << rng.choice((0, 8, 16, 24)))) for a, _ in pairs[:1000]]
    pairs += [(0, 0), (0xFFFFFFFF, 1), (1, 0xFFFFFFFF), (0x80808080, 0x7F7F7F7F), (0x00FF00FF, 0x01010101),
              (0x7FFF8000, 0x80007FFF)]
    return pairs


def test_every_simd_polyfill_has_a_model():
    # (the others add an overload that calls HIP's own function: `sincos(float, ...)` -> `sincosf`)
    assert {n for n, p in polyfills().items() if "lacks" not in p} == set(MODEL)


@pytest.mark.skipif(CXX is None, reason="no host C++ compiler")
@pytest.mark.parametrize("name", sorted(MODEL))
def test_polyfill_computes_what_cuda_documents(name, tmp_path):
    src = tmp_path / "t.cpp"
    src.write_text("#define __device__\n#define __forceinline__ inline\n#include <cstdio>\n"
                   + polyfills()[name]["code"]
                   + f"int main() {{ unsigned a, b; while (std::scanf(\"%u %u\", &a, &b) == 2) "
                   f"std::printf(\"%u\\n\", {name}(a, b)); }}\n")
    exe = tmp_path / "t"
    subprocess.run([CXX, "-std=c++17", "-O1", "-Wall", "-Werror", "-o", str(exe), str(src)], check=True)
    pairs = _inputs()
    out = subprocess.run([str(exe)], input="".join(f"{a} {b}\n" for a, b in pairs), capture_output=True,
                         text=True, check=True).stdout.split()
    width, op = MODEL[name]
    wrong = [(hex(a), hex(b), hex(int(got))) for (a, b), got in zip(pairs, out)
             if int(got) != _pack([op(x, y) for x, y in zip(_lanes(a, width), _lanes(b, width))], width)]
    assert len(out) == len(pairs) and not wrong[:5]
