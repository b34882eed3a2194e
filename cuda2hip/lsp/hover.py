"""Hover on a finding's range: the documentation of its rule, as `cuda2hip explain` prints it."""

from __future__ import annotations

from lsprotocol import types

from ..rulebook.docs import rule_markdown
from .analysis import Analysis
from .diagnostics import rule_of


def hover(a: Analysis, offset: int) -> types.Hover | None:
    """The docs of the rules of the findings at the editor's byte `offset` (None if none)."""
    numbers = a.at(offset, offset)
    if not numbers or a.project is None:
        return None
    pages = []
    seen = set()
    for i in numbers:
        f = a.findings[i]
        if f.code in seen:
            continue
        seen.add(f.code)
        rule = rule_of(a.project.engine, f.code)[0]
        if rule is not None:
            pages.append(rule_markdown(rule).rstrip("\n"))
    if not pages:
        return None
    first = a.findings[numbers[0]]
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(pages)),
                       range=a.index.range(first.start + a.shift, first.end + a.shift))
