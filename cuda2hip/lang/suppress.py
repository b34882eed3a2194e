"""Suppression comments, in any language's comment syntax:

    cudaMalloc(&p, n);  // cuda2hip: ignore[HIP101]
    // cuda2hip: ignore[HIP101,HIP102]      (also covers the next line)
    // cuda2hip: file-ignore[HIP405]        (the whole file)

`ignore` without a code list suppresses every rule. Suppressed findings are kept (marked
suppressed) for the reports; directives that suppress nothing are reported themselves.
"""

from __future__ import annotations

import re

from msgspec import Struct, field

from ..findings import Finding
from .lazy_regex import LazyRegex

DIRECTIVE = LazyRegex(
    r"cuda2hip:\s*(?P<kind>file-ignore|ignore)\b(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
# A comment that is nothing but a directive (its removal is a safe fix).
ONLY_DIRECTIVE = LazyRegex(
    r"^(?://|#|/\*)\s*cuda2hip:\s*(?:file-ignore|ignore)\b(?:\[[^\]]*\])?\s*(?:\*/)?\s*$", re.IGNORECASE)


class Directive(Struct):
    line: int
    start: int  # byte range of the whole comment
    end: int
    codes: tuple[str, ...] | None  # None: every rule
    file_level: bool
    comment: str
    codes_span: tuple[int, int] | None = None  # byte range of the text between the brackets
    used: set[str] = field(default_factory=set)
    used_all: bool = False


def parse_directives(comments, source) -> list[Directive]:
    """`comments`: iterable of (start, end) byte ranges of comments in `source.data`."""
    out = []
    data = source.data
    for start, end in comments:
        text = data[start:end].decode("utf-8", errors="replace")
        m = DIRECTIVE.search(text)
        if not m:
            continue
        codes = None
        span = None
        if m.group("codes") is not None:
            codes = tuple(c.strip() for c in m.group("codes").split(",") if c.strip())
            prefix = text[:m.start("codes")].encode()
            span = (start + len(prefix), start + len(prefix) + len(m.group("codes").encode()))
        line, _ = source.position(start)
        out.append(Directive(line, start, end, codes, m.group("kind").lower() == "file-ignore", text, span))
    return out


def _covers(d: Directive, f: Finding) -> bool:
    return d.file_level or f.line in (d.line, d.line + 1)


def _names(f: Finding) -> tuple[str, str]:
    return f.code, f.rule_id


def apply_suppressions(findings: list[Finding], directives: list[Directive]) -> None:
    if not directives:
        return
    for f in findings:
        for d in directives:
            if not _covers(d, f):
                continue
            if d.codes is None:
                d.used_all = True
                f.suppressed = True
            else:
                for c in d.codes:
                    if c in _names(f):
                        d.used.add(c)
                        f.suppressed = True


def unused_codes(d: Directive, known: set[str], selected: set[str]) -> list[str]:
    """Codes of a directive that suppressed nothing. Codes of known rules that are not selected
    in this run are not reported (the directive may matter for another configuration)."""
    if d.codes is None:
        return [] if d.used_all else ["*"]
    out = []
    for c in d.codes:
        if c in d.used:
            continue
        if c in known and c not in selected:
            continue
        out.append(c)
    return out
