"""`--format github`: GitHub Actions workflow commands, one annotation a finding
(`::warning file=...,line=...::message`), paths relative to the project root, then the summary
line in the log."""

from __future__ import annotations

from pathlib import Path

from .sources import repo_path
from .summary import hidden_note, shown, summarize
from .text import summary_line

LEVELS = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(run, ctx) -> str:
    root = Path(ctx.settings.root)
    lines = []
    # Suppressed findings are not annotated (an annotation cannot be marked as dismissed).
    for f in sorted(shown(run.findings, ctx), key=lambda f: f.sort_key):
        if f.suppressed:
            continue
        props = [f"file={_prop(repo_path(f.path, root))}", f"line={f.line}", f"col={f.column}",
                 f"endLine={f.end_line}"]
        if f.end_line == f.line:  # GitHub accepts endColumn only on one-line annotations
            props.append(f"endColumn={f.end_column}")
        props.append(f"title={_prop(f'{f.code} {f.rule_id}')}")
        lines.append(f"::{LEVELS[f.severity.label]} {','.join(props)}::{_data(f.message)}")
    for e in run.errors:
        lines.append(f"::error file={_prop(repo_path(e.path, root))},title=cuda2hip::{_data(e.reason)}")
    if not ctx.quiet:
        lines.append(summary_line(summarize(run, ctx.settings), run.mode.value))
        note = hidden_note(run, ctx)
        if note:
            lines.append(note)
    return "\n".join(lines) + "\n" if lines else ""
