"""The whole-file scanners run on RE2 (match/scanners.py) find what Python's `re` finds, at the
same byte offsets, on any bytes and from any start or end offset."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda2hip.checks.api import runtime_include
from cuda2hip.engine import scanners
from cuda2hip.engine.scanners import scanner

PATTERNS = [runtime_include._DEVICE_SYNTAX, runtime_include._API_NAME, runtime_include._API_SYNTAX]
PIECES = st.sampled_from([b"threadIdx", b"__global__", b"<<<", b"cudaMalloc", b"hipFree", b"float4", b"dim3",
                          b"x", b"_", b" ", b"\n", b"\xe9", b"\xff", b"\xc3\xa9", b"__shfl_xor", b"atomicAdd", b"9"])


@pytest.fixture(params=["re", "re2"])
def engine(request, monkeypatch):
    """The scanners as a process runs them before (`re`) and after (RE2) RE_BYTES of text."""
    monkeypatch.setattr(scanners, "RE_BYTES", 1 << 62 if request.param == "re" else 0)
    monkeypatch.setattr(scanners, "_scanned", 0)
    scanner.cache_clear()
    yield request.param
    scanner.cache_clear()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(PIECES, max_size=12).map(b"".join), pos=st.integers(0, 40), cut=st.integers(0, 40))
def test_same_matches_as_re(engine, data, pos, cut):
    end = max(pos, len(data) - cut)
    for pattern in PATTERNS:
        compiled = re.compile(pattern)
        want = [(m.start(), m.end(), m.group()) for m in compiled.finditer(data, pos, end)]
        found = scanner(pattern).search(data, pos, end)
        assert (found.start(), found.end()) == want[0][:2] if want else found is None
        assert [(m.start(), m.end(), m.group()) for m in scanner(pattern).finditer(data, pos, end)] == want


def test_refuses_patterns_whose_meaning_differs():
    with pytest.raises(ValueError):
        scanner(rb"\s+x")
    for pattern in (rb"(?<!\w)x", rb"x$", rb"(?x) x", rb"[[:space:]]", rb"\S"):
        with pytest.raises(ValueError):
            scanner(pattern)


def test_switches_to_re2_after_enough_text(monkeypatch):
    monkeypatch.setattr(scanners, "RE_BYTES", 100)
    monkeypatch.setattr(scanners, "_scanned", 0)
    scanner.cache_clear()
    s = scanner(runtime_include._API_NAME)
    assert [m.group() for m in s.finditer(b"cudaFree(p);" * 5)] == [b"cudaFree"] * 5  # 60 bytes: re
    assert s._re2 is None
    assert [m.group() for m in s.finditer(b"cudaFree(p);" * 10)] == [b"cudaFree"] * 10  # past 100: RE2
    assert s._re2 is not None
    scanner.cache_clear()
