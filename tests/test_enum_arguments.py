"""The call an enumerator is an argument of, read from the text (match/enum_arguments.py): the
enum-by-parameter mapping relies on it in code and in macro bodies alike."""

from __future__ import annotations

import pytest

from cuda2hip.checks.api.enum_arguments import argument_of, argument_texts

NAME = b"CUBLAS_FILL_MODE_LOWER"


def _at(text: bytes):
    start = text.index(NAME)
    return argument_of(text, start, start + len(NAME))


@pytest.mark.parametrize("text,expected", [
    (b"cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, l, i);", ("cusolverDnSpotrf", 1)),
    (b"f(g(a, b), (c), CUBLAS_FILL_MODE_LOWER)", ("f", 2)),
    (b"#define P(h) cusolverDnSpotrs(h, \\\n  CUBLAS_FILL_MODE_LOWER, 1)", ("cusolverDnSpotrs", 1)),
    (b"f<int, 2>(CUBLAS_FILL_MODE_LOWER)", ("f", 0)),
    # not a whole argument, or not an argument at all
    (b"f(h, up ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, n)", None),
    (b"cublasFillMode_t m = CUBLAS_FILL_MODE_LOWER;", None),
    (b"int v[] = {1, CUBLAS_FILL_MODE_LOWER};", None),
    (b"if (m > (CUBLAS_FILL_MODE_LOWER)) {}", None),
])
def test_argument_of(text, expected):
    assert _at(text) == expected


def test_argument_texts():
    text = b"cusolverDnSpotrf (h, CUBLAS_FILL_MODE_LOWER, g(n, 2), a[1], n)"
    assert argument_texts(text, len(b"cusolverDnSpotrf")) == ["h", "CUBLAS_FILL_MODE_LOWER", "g(n, 2)", "a[1]", "n"]
    assert argument_texts(b"f;", 1) is None
