"""What a report may show of a source line: a window of it around the finding when the line is
long (a one-line generated file must not put a megabyte into the frame of each of its
findings), and, on a terminal, its control characters escaped (a source's ESC sequences would
drive the terminal: clear it, retitle it, hide or forge report lines)."""

from __future__ import annotations

from ..lang.lazy_regex import LazyRegex

# Columns of a line shown around a finding; longer lines are cut, with an ellipsis at each cut.
FRAME_COLUMNS = 500
# Columns kept before the finding's first column when the line is cut.
LEAD_COLUMNS = 200
ELLIPSIS = "…"

# control characters (tabs aside) and the bidirectional controls that reorder what a line shows
_CONTROL = LazyRegex(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def frame_window(length: int, lo: int, hi: int) -> tuple[int, int]:
    """The code points [start, end) of a line of `length` shown for a finding marking [lo, hi)."""
    if length <= FRAME_COLUMNS:
        return 0, length
    start = max(0, min(lo - LEAD_COLUMNS, length - FRAME_COLUMNS))
    return start, start + FRAME_COLUMNS


def escape_controls(text: str) -> str:
    """`text` with control characters written as Python escapes (`\\x1b`); tabs stay."""
    if text.isprintable() or not _CONTROL.search(text):  # (printable: none of them, no tab either)
        return text
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
