"""Code for the HTML report: syntax-highlighted lines (Pygments tokens, rendered here so that a
finding's columns can be marked inside them), the frame around a finding, the before/after of
its fix, and a rendered unified diff."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from html import escape as _html_escape

from markupsafe import Markup

from .clip import ELLIPSIS, FRAME_COLUMNS, frame_window

def _escape(text: str) -> str:
    return _html_escape(text, quote=False)


CONTEXT_LINES = 2
MAX_MARKED_LINES = 6  # a finding spanning more lines shows its first ones
MAX_PREVIEW_LINES = 12  # fix previews larger than this are left to the diff
# A file with a line longer than this is shown plain: Pygments would spend a minute on a
# megabyte of generated initialiser, of which each frame shows a window.
HIGHLIGHT_LINE_LIMIT = 10_000

Token = tuple[str, str]  # (css class, text)
# Token classes shown in the text colour: no span for them keeps big reports small.
PLAIN_CLASSES = frozenset({"w", "n", "p", "o", "x", "nn", "nx"})


@lru_cache(maxsize=None)
def _lexer(path: str):
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _css_class(ttype) -> str:
    from pygments.token import STANDARD_TYPES

    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def highlight(src, path: str) -> list[list[Token]]:
    """Tokens of each line of SourceText `src` (line breaks removed), highlighted for `path`'s
    language. Files whose lines Pygments would count differently (lone CRs) stay plain."""
    plain = [[("", src.line_text(n))] for n in range(1, len(src.line_starts) + 1)]
    if any(len(line[0][1]) > HIGHLIGHT_LINE_LIMIT for line in plain):
        return plain  # generated data, not code to read: frames show a window of it anyway
    text = src.text
    if "\r" in text.replace("\r\n", ""):
        return plain
    lines: list[list[Token]] = [[]]
    for ttype, value in _lexer(path).get_tokens(text):
        cls = _css_class(ttype)
        cls = "" if cls in PLAIN_CLASSES else cls
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if not part:
                continue
            line = lines[-1]
            if line and line[-1][0] == cls:  # merge runs of one class: smaller page
                line[-1] = (cls, line[-1][1] + part)
            else:
                line.append((cls, part))
    return lines if len(lines) == len(plain) else plain


def render_tokens(tokens: list[Token], mark: tuple[int, int] | None = None) -> Markup:
    """HTML of one line; code points [mark[0], mark[1]) are wrapped in <mark>."""
    out = []
    col = 0
    for cls, text in tokens:
        pieces = ((text, False),)
        if mark is not None:
            lo, hi = mark[0] - col, mark[1] - col
            if hi > 0 and lo < len(text):
                lo, hi = max(lo, 0), min(hi, len(text))
                pieces = ((text[:lo], False), (text[lo:hi], True), (text[hi:], False))
        for piece, marked in pieces:
            if not piece:
                continue
            html = _escape(piece)
            if cls:
                html = f'<span class="{cls}">{html}</span>'
            out.append(f"<mark>{html}</mark>" if marked else html)
        col += len(text)
    return Markup("".join(out))


@dataclass
class FrameLine:
    number: int
    html: Markup
    marked: bool


def frame(lines: list[list[Token]], f) -> list[FrameLine]:
    """The lines around finding `f`, its range marked."""
    if not lines:
        return []
    count = len(lines)
    if count > 1 and not any(text for _, text in lines[-1]):
        count -= 1  # the empty "line" after the final line break
    last_marked = min(f.end_line, f.line + MAX_MARKED_LINES - 1)
    first = max(1, f.line - CONTEXT_LINES)
    last = min(len(lines), max(min(count, last_marked + CONTEXT_LINES), f.line))
    # A long line shows a window of FRAME_COLUMNS around the finding (the same columns on every
    # line of the frame): a generated one-line file must not put all of itself into each frame.
    marked_width = sum(len(t) for _, t in lines[f.line - 1])
    start = frame_window(marked_width, f.column - 1, f.column)[0]
    end = start + FRAME_COLUMNS
    out = []
    for n in range(first, last + 1):
        tokens = lines[n - 1]
        width = sum(len(t) for _, t in tokens)
        mark = None
        if f.line <= n <= last_marked:
            lo = f.column - 1 if n == f.line else 0
            hi = f.end_column - 1 if n == f.end_line else width
            mark = (lo, max(hi, lo + 1)) if n == f.line else (lo, hi)
        if start > 0 or width > end:
            tokens, shift = _clip(tokens, width, start, end), (1 if start > 0 else 0) - start
            if mark is not None:
                mark = (max(mark[0], start) + shift, min(mark[1], end) + shift)
        out.append(FrameLine(n, render_tokens(tokens, mark), mark is not None))
    return out


def _clip(tokens: list[Token], width: int, start: int, end: int) -> list[Token]:
    """The code points [start, end) of a line's tokens, an ellipsis where the line is cut."""
    out: list[Token] = [("", ELLIPSIS)] if start > 0 and width > start else []
    col = 0
    for cls, text in tokens:
        a, b = max(start - col, 0), min(end - col, len(text))
        if a < b:
            out.append((cls, text[a:b]))
        col += len(text)
        if col >= end:
            break
    if width > end:
        out.append(("", ELLIPSIS))
    return out


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
    # long lines: the window of columns around the first edit, as the frame shows them
    col = len(src.data[lo:edits[0].start].decode("utf-8", "replace"))
    start = frame_window(max(map(len, old + new), default=0), col, col + 1)[0]
    return [PreviewLine("del", _clip_text(t, start)) for t in old] + [PreviewLine("add", _clip_text(t, start))
                                                                      for t in new]


def _clip_text(text: str, start: int) -> str:
    end = start + FRAME_COLUMNS
    if start == 0 and len(text) <= end:
        return text
    return (ELLIPSIS if start > 0 else "") + text[start:end] + (ELLIPSIS if len(text) > end else "")


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, text) for each line of a unified diff."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        elif line.startswith("\\"):
            kind = "note"
        else:
            kind = "ctx"
        if len(line) > HIGHLIGHT_LINE_LIMIT:  # generated data: its start, and how much is left out
            line = f"{line[:FRAME_COLUMNS]}{ELLIPSIS} ({len(line) - FRAME_COLUMNS:,} more characters)"
        out.append((kind, line))
    return out


def pygments_css(selector: str, style: str) -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style=style).get_style_defs(selector)
