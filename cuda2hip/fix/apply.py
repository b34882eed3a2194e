"""Apply byte-range edits: fixes sorted by position, a fix whose edits overlap an already
accepted fix is skipped (the next pass re-lints and picks it up if it still applies)."""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

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
    return apply_edits_tracked(data, edits, newline)[0]


def apply_fixes(data: bytes, fixes: list[Fix], newline: str = "\n") -> bytes:
    return apply_edits(data, [e for f in fixes for e in f.edits], newline)


def apply_fixes_tracked(data: bytes, fixes: list[Fix], newline: str = "\n") -> tuple[bytes, list[Change]]:
    return apply_edits_tracked(data, [e for f in fixes for e in f.edits], newline)


def apply_edits_tracked(data: bytes, edits: list[Edit], newline: str = "\n") -> tuple[bytes, list[Change]]:
    """`apply_edits`, plus the byte ranges it changed (see `Change`), for an incremental
    re-parse of the result."""
    out = []
    pos = 0
    placed: list[tuple[Edit, int, int]] = []  # edit, start and end of its text in the result
    size = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError(f"overlapping edits at byte {e.start}")
        keep = data[pos:e.start]
        text = normalise_newlines(e.text, newline).encode("utf-8")
        out.append(keep)
        size += len(keep)
        out.append(text)
        placed.append((e, size, size + len(text)))
        size += len(text)
        pos = e.end
    out.append(data[pos:])
    realigned: list[tuple[int, int, int]] = []
    new = _realign_continuations(data, b"".join(out), placed, realigned)
    return new, _changes(placed, realigned)


class Change(NamedTuple):
    """Bytes [old_start, old_end) of the old text became [new_start, new_end) of the new one;
    outside the changes of an edit, both texts are the same bytes (only shifted)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


def _changes(placed, realigned) -> list[Change]:
    """The changes in old and final coordinates, from the edits (old -> intermediate text) and
    the realigned lines (intermediate -> final text): overlapping or touching ranges of the
    intermediate text are merged, so that no boundary of a change lies inside an edit or a
    realigned line, where neither mapping is a plain shift."""
    # `placed` is in order already; a merge does not depend on the order of equal starts
    spans = [(s, e, (e - s) - (edit.end - edit.start), 0) for edit, s, e in placed]
    if realigned:
        spans = sorted(spans + [(a, b, 0, size - (b - a)) for a, b, size in realigned])
    merged: list[list[int]] = []  # intermediate start, end, length change by edits, by realigning
    for s, e, d_edit, d_align in spans:
        if merged and s <= merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            last[2] += d_edit
            last[3] += d_align
        else:
            merged.append([s, e, d_edit, d_align])
    out: list[Change] = []
    shift_old = shift_new = 0  # intermediate -> old, intermediate -> final, before a change
    for s, e, d_edit, d_align in merged:
        out.append(Change(s - shift_old, e - shift_old - d_edit, s + shift_new, e + shift_new + d_align))
        shift_old += d_edit
        shift_new += d_align
    return out


_CONTINUATION = re.compile(rb"^(?P<body>.*?[^ \t])?(?P<pad>[ \t]{2,})\\(?P<eol>\r?\n?)$")
_NEWLINE = re.compile(rb"\n")


def _line_bounds(data: bytes, offset: int) -> tuple[int, int]:
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    return start, (len(data) if end == -1 else end + 1)


def _realign_continuations(old: bytes, new: bytes, placed, realigned: list | None = None) -> bytes:
    """Keep the column of aligned line-continuation backslashes (macro bodies) where a one-line
    edit changed the length of the text in front of them. Whitespace only, and only on lines
    without tabs before the backslash. Each replaced line
    is added to `realigned` as (start, end, new length), in coordinates of `new` as given."""
    if b"\\" not in old or not placed:
        return new
    targets: dict[int, tuple[int, int]] = {}  # new line start -> (new line end, backslash column)
    breaks = [m.start() for m in _NEWLINE.finditer(old)]  # (a line looked up per edit: linear)
    seen: set[int] = set()
    for e, new_start, new_end in placed:
        if b"\n" in old[e.start:e.end] or b"\n" in new[new_start:new_end]:
            continue
        i = bisect.bisect_left(breaks, e.start)
        o_start = breaks[i - 1] + 1 if i > 0 else 0
        o_end = breaks[i] + 1 if i < len(breaks) else len(old)
        if o_start in seen:
            continue  # another edit of the same line: the same target
        seen.add(o_start)
        last = o_end - (old[o_end - 1:o_end] == b"\n")
        last -= old[last - 1:last] == b"\r"
        if old[last - 1:last] != b"\\":
            continue  # no continuation: the common case, decided without reading the line
        m = _CONTINUATION.match(old[o_start:o_end])
        if m is None or b"\t" in old[o_start:o_start + m.end("pad")]:
            # With tabs the column depends on the reader's tab width: the padding the line
            # used is kept as it is (never turned into spaces).
            continue
        column = len(old[o_start:o_start + m.start("pad") + len(m.group("pad"))].decode("utf-8", "replace"))
        n_start, n_end = _line_bounds(new, new_start)
        targets[n_start] = (n_end, column)
    for n_start in sorted(targets, reverse=True):
        n_end, column = targets[n_start]
        line = new[n_start:n_end]
        m = _CONTINUATION.match(line)
        if m is None:
            continue
        body = m.group("body") or b""
        width = len(body.decode("utf-8", "replace"))
        pad = max(1, column - width)
        fixed = body + b" " * pad + b"\\" + m.group("eol")
        new = new[:n_start] + fixed + new[n_end:]
        if realigned is not None:
            realigned.append((n_start, n_end, len(fixed)))
    return new
