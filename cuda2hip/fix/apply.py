"""Apply byte-range edits: fixes sorted by position, a fix whose edits overlap an already
accepted fix is skipped (the next pass re-lints and picks it up if it still applies)."""

from __future__ import annotations

import bisect

from ..findings import Edit, Fix


def _conflicts(a: Edit, b: Edit) -> bool:
    if a.start == b.start:
        return True  # two edits at one point: their order would be arbitrary
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def choose_fixes(fixes: list[Fix]) -> list[Fix]:
    """A conflict-free subset of `fixes`, earliest first (deterministic).

    Accepted edits never overlap, so kept sorted by start their ends are sorted too: an edit can
    only conflict with the accepted edit just before it or those starting inside its span. That
    keeps a file with thousands of fixes at O(n log n) instead of comparing every pair.
    """
    accepted: list[Fix] = []
    starts: list[int] = []
    taken: list[Edit] = []
    for fix in sorted(fixes, key=lambda f: (f.edits[0].start, f.edits[-1].end) if f.edits else (0, 0)):
        if not fix.edits:
            continue
        if any(_conflicts_taken(e, starts, taken) for e in fix.edits):
            continue
        accepted.append(fix)
        for e in fix.edits:
            i = bisect.bisect_left(starts, e.start)
            starts.insert(i, e.start)
            taken.insert(i, e)
    return accepted


def _conflicts_taken(e: Edit, starts: list[int], taken: list[Edit]) -> bool:
    i = bisect.bisect_left(starts, e.start)
    if i > 0 and _conflicts(e, taken[i - 1]):
        return True
    n = len(taken)
    while i < n and (starts[i] < e.end or starts[i] == e.start):
        if _conflicts(e, taken[i]):
            return True
        i += 1
    return False


def normalise_newlines(text: str, newline: str) -> str:
    if newline == "\n" or "\n" not in text and "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)


def apply_edits(data: bytes, edits: list[Edit], newline: str = "\n") -> bytes:
    """Apply non-overlapping edits (offsets into `data`)."""
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError(f"overlapping edits at byte {e.start}")
        out.append(data[pos:e.start])
        out.append(normalise_newlines(e.text, newline).encode("utf-8"))
        pos = e.end
    out.append(data[pos:])
    return b"".join(out)


def apply_fixes(data: bytes, fixes: list[Fix], newline: str = "\n") -> bytes:
    return apply_edits(data, [e for f in fixes for e in f.edits], newline)
