"""`--format concise`: `path:line:col: CODE [severity] message`, one line a finding; below them
the line that counts the findings under --min-severity (not with -q), and with `fix
--show-fixes` the fixes applied."""

from __future__ import annotations

from .clip import escape_controls
from .summary import hidden_note, shown, shown_path


def render(run, ctx) -> str:
    lines = []
    for f in shown(run.findings, ctx):
        mark = " (suppressed)" if f.suppressed else ""
        fix = " [*]" if f.fix is not None and f.fix.applicability.value == "safe" else ""
        lines.append(f"{shown_path(f.path)}:{f.line}:{f.column}: {f.code}{fix} [{f.severity.label}] {escape_controls(f.message)}{mark}")
    for e in run.errors:
        lines.append(f"{shown_path(e.path)}: error: {escape_controls(e.reason)}")
    if ctx.fix_details and run.fixed:
        from .applied import applied_lines

        lines.extend(applied_lines(run, ctx)[:-1])
    note = "" if ctx.quiet else hidden_note(run, ctx)
    if note:
        lines.append(note)
    return "\n".join(lines) + ("\n" if lines else "")
