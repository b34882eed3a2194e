"""Recognise a file with a C/C++/CUDA name that is not C/C++/CUDA at all (Markdown, YAML,
Python, shell, prose named .h or .cu), so that the runner refuses it instead of "fixing" it.

Real code often parses with error recovery (about 15% of files), sometimes badly: a `#if` that
splits braces makes one ERROR node cover the whole file, macro-decorated declarations
(`PyAPI_FUNC(int) f(void);`, `__DEVICE__ double abs(double);`) put errors on most lines, and
table fragments meant to be included inside an initializer do not parse on their own at all.
So parse errors alone never decide: the text must also not be shaped like C, line by line
(statements and declarations end with `;`, `{`, `}`, `)` or `,`; directives are known `#`
words). Measured on the 10,330 headers of this machine's /usr/include: none is refused, while
Markdown, YAML, Python, TOML, shell and Makefiles are. JSON looks like a C initializer and is
not refused (the rules find nothing in it).
"""

from __future__ import annotations

from ..lazy_regex import LazyRegex

# Refused only when all hold: syntax errors start on this share of the non-blank lines, cover
# this share of the non-blank bytes, and fewer than this share of the lines look like C.
ERROR_LINES = 0.3
ERROR_BYTES = 0.5
C_SHAPED_LINES = 0.6

_DIRECTIVE = LazyRegex(rb"#\s*(include|define|undef|if|ifdef|ifndef|elif|else|endif|pragma|error|"
                        rb"warning|line|import)\b")
_C_ENDINGS = (b";", b"{", b"}", b")", b",", b"\\", b"*/")
_COMMENT_STARTS = (b"//", b"/*", b"*")


def c_shaped_share(data: bytes) -> float:
    """Share of the non-blank, non-comment lines that end like C code or are directives."""
    shaped = total = 0
    for line in data.splitlines():
        s = line.strip()
        if not s or s.startswith(_COMMENT_STARTS):
            continue
        total += 1
        if s.startswith(b"#"):
            shaped += _DIRECTIVE.match(s) is not None
        elif s.endswith(_C_ENDINGS):
            shaped += 1
    return shaped / total if total else 1.0


def foreign_text_reason(data: bytes, errors: list, error_lines: list[int]) -> str | None:
    """Why `data` (whose parse had `errors`, starting on `error_lines`) is not C/C++/CUDA at
    all; None when it may well be."""
    if not errors:
        return None
    lines = sum(1 for line in data.splitlines() if line.strip())
    if lines == 0 or len(error_lines) < ERROR_LINES * lines:
        return None
    spans: list[list[int]] = []
    for node in errors:  # document order: merge nested and overlapping spans
        if spans and node.start_byte <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], node.end_byte)
        else:
            spans.append([node.start_byte, node.end_byte])
    solid = _solid(data)
    covered = sum(_solid(data[s:e]) for s, e in spans)
    if solid == 0 or covered < ERROR_BYTES * solid:
        return None
    shaped = c_shaped_share(data)
    if shaped >= C_SHAPED_LINES:
        return None
    return (f"does not parse as C/C++/CUDA (syntax errors start on {len(error_lines)} of {lines} "
            f"lines and cover {100 * covered // solid}% of the text; {100 * shaped:.0f}% of the "
            "lines look like C); left untouched")


def _solid(data: bytes) -> int:
    """Bytes that are not white space."""
    return len(data) - sum(data.count(c) for c in (b" ", b"\t", b"\n", b"\r", b"\f", b"\v"))
