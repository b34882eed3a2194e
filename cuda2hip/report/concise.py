"""`--format concise`: `path:line:col: CODE [severity] message`, one line a finding."""

from __future__ import annotations

from .clip import escape_controls
from .summary import shown_path, visible


def render(run, ctx) -> str:
    lines = []
    for f in visible(run.findings, ctx.show_suppressed):
        mark = " (suppressed)" if f.suppressed else ""
        fix = " [*]" if f.fix is not None and f.fix.applicability.value == "safe" else ""
        lines.append(f"{shown_path(f.path)}:{f.line}:{f.column}: {f.code}{fix} [{f.severity.label}] {escape_controls(f.message)}{mark}")
    for e in run.errors:
        lines.append(f"{shown_path(e.path)}: error: {escape_controls(e.reason)}")
    return "\n".join(lines) + ("\n" if lines else "")
