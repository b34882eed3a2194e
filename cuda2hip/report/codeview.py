"""A fix shown as the lines it changes, before and after (the HTML report's fix boxes, the text
report's --show-fixes)."""

from __future__ import annotations

from dataclasses import dataclass

from .clip import ELLIPSIS, FRAME_COLUMNS, frame_window

MAX_PREVIEW_LINES = 12  # fix previews larger than this are left to the diff


@dataclass
class PreviewLine:
    kind: str  # "del" / "add"
    text: str


def fix_preview(src, fix) -> list[PreviewLine]:
    """Before/after lines of one fix applied alone to the current text (empty if the fix
    touches more lines than a preview should show)."""
    edits = sorted(fix.edits, key=lambda e: (e.start, e.end))
    if not edits or edits[-1].end > len(src.data):
        return []
    lo = src.line_start(edits[0].start)
    end = edits[-1].end
    hi = src.line_end(end - 1 if end > lo and end > edits[-1].start else end)
    before = src.data[lo:hi]
    parts, pos = [], lo
    for e in edits:
        if e.start < pos:  # overlapping edits: not a preview we can show faithfully
            return []
        parts += [src.data[pos:e.start], e.text.encode("utf-8")]
        pos = e.end
    parts.append(src.data[pos:hi])
    after = b"".join(parts)
    old = before.decode("utf-8", "replace").splitlines()
    new = after.decode("utf-8", "replace").splitlines()
    if len(old) + len(new) > MAX_PREVIEW_LINES:
        return []
    # long lines: the window of columns around the first edit (a generated one-line file must
    # not put all of itself into each preview)
    col = len(src.data[lo:edits[0].start].decode("utf-8", "replace"))
    start = frame_window(max(map(len, old + new), default=0), col, col + 1)[0]
    return [PreviewLine("del", _clip_text(t, start)) for t in old] + [PreviewLine("add", _clip_text(t, start))
                                                                      for t in new]


def _clip_text(text: str, start: int) -> str:
    end = start + FRAME_COLUMNS
    if start == 0 and len(text) <= end:
        return text
    return (ELLIPSIS if start > 0 else "") + text[start:end] + (ELLIPSIS if len(text) > end else "")
