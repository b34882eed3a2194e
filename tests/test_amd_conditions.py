"""Which preprocessor arms hipcc compiles for AMD GPUs (match/amd_conditions.py)."""

from __future__ import annotations

import pytest

from cuda2hip import parse
from cuda2hip.match.amd_conditions import DEFINED, evaluate, known_macros
from cuda2hip.match.cxx_functions import exclusive, functions

AMD = dict(DEFINED)  # what every release defines (no version)
ROCM_52 = known_macros("5.2")
ROCM_72 = known_macros("7.2")


@pytest.mark.parametrize("cond, macros, value", [
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", AMD, False),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600", AMD, True),
    ("defined(__HIP_PLATFORM_AMD__)", AMD, True),
    ("!defined(__HIPCC__) || HIP_VERSION < 40400000", AMD, None),  # the version is not known
    ("!defined(__HIPCC__) || HIP_VERSION < 40400000", ROCM_52, False),
    ("HIP_VERSION >= 60200000", ROCM_52, False),
    ("HIP_VERSION >= 60200000", ROCM_72, True),
    ("HIP_VERSION_MAJOR >= 7", ROCM_72, True),
    ("HIP_VERSION_MAJOR > 5 || (HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR >= 2)", ROCM_52, True),
    ("defined(USE_DRIVER)", AMD, None),
    ("defined(USE_DRIVER) && 0", AMD, False),
    ("defined(USE_DRIVER) || 1", AMD, True),
    ("0", AMD, False),
    ("FOO(1)", AMD, None),
])
def test_conditions_on_amd(cond, macros, value):
    assert evaluate(cond, macros) is value


def _fns(src: str):
    data = src.encode()
    return functions(parse.parse("cuda", data), data)


def test_arms_of_one_chain_exclude_each_other_and_dead_arms_are_known():
    a, b, c = _fns("#ifdef X\nvoid f(int) {}\n#elif defined(Y)\nvoid f(int) {}\n#else\nvoid f(int) {}\n#endif\n")
    assert exclusive(a, b) and exclusive(b, c) and exclusive(a, c)
    d, e = _fns("#ifdef X\nvoid f(int) {}\n#endif\n#ifndef X\nvoid f(int) {}\n#endif\n")
    assert exclusive(d, e)
    g, h = _fns("#ifdef X\nvoid f(int) {}\n#endif\n#ifdef Y\nvoid f(int) {}\n#endif\n")
    assert not exclusive(g, h) and g.amd is None
    dead, live = _fns("#if !defined(__HIP_PLATFORM_AMD__)\nvoid f(int) {}\n#else\nvoid g(int) {}\n#endif\n")
    assert dead.dead_on_amd() and live.amd is True
