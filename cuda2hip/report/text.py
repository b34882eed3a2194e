"""`--format text`: each finding with a code frame, then a summary."""

from __future__ import annotations

import re
from collections import defaultdict

from ..lang.source import SourceError, SourceText
from .clip import ELLIPSIS, FRAME_COLUMNS, escape_controls, frame_window
from .summary import hidden_note, shown, shown_path, summarize

SEVERITY_COLORS = {"error": "red", "warning": "yellow", "info": "cyan", "hint": "blue"}
CONTEXT_LINES = 1


def _style(text: str, ctx, **kw) -> str:
    if not ctx.color:
        return text
    import click  # only on a terminal

    return click.style(text, **kw)


def _frame(src: SourceText | None, f, ctx) -> list[str]:
    """The lines around finding `f`, its range marked: long lines cut to a window around it,
    tabs expanded and control characters escaped (the marker counts what is shown)."""
    if src is None:
        return []
    out = []
    first = max(1, f.line - CONTEXT_LINES)
    last = min(len(src.line_starts), f.end_line + CONTEXT_LINES, f.line + 6)
    width = len(str(last))
    marked = src.line_text(f.line)
    lo = min(f.column - 1, len(marked))
    hi = max(lo, min(f.end_column - 1 if f.end_line == f.line else len(marked), len(marked)))
    start = frame_window(len(marked), lo, hi)[0]
    end = start + FRAME_COLUMNS  # the same columns of every line of the frame
    for n in range(first, last + 1):
        line = src.line_text(n)
        shown = _shown(line[start:end]) if n != f.line else None
        if n == f.line:
            head, body = _shown(line[start:lo]), _shown(line[lo:min(hi, end)])
            shown = head + body + _shown(line[min(hi, end):end])
        if start > 0 and len(line) > start:
            shown = ELLIPSIS + shown
        if len(line) > end:
            shown += ELLIPSIS
        gutter = _style(f"{n:>{width}} |", ctx, fg="blue")
        out.append(f"  {gutter} {shown}")
        if n == f.line:
            indent = len(head) + (1 if start > 0 else 0)
            marker = " " * indent + "^" * max(1, len(body))
            out.append(f"  {' ' * width} {_style('|', ctx, fg='blue')} "
                       f"{_style(marker, ctx, fg=SEVERITY_COLORS[f.severity.label], bold=True)}")
    return out


def _shown(text: str) -> str:
    return escape_controls(text.expandtabs(4) if "\t" in text else text)


def render(run, ctx) -> str:
    lines: list[str] = []
    by_file = defaultdict(list)
    for f in shown(run.findings, ctx):
        by_file[f.path].append(f)
    for path in sorted(by_file):
        try:
            src = SourceText.read(path)
        except SourceError:
            src = None
        for f in sorted(by_file[path], key=lambda f: (f.line, f.column)):
            sev = _style(f.severity.label, ctx, fg=SEVERITY_COLORS[f.severity.label], bold=True)
            head = (f"{_style(f'{shown_path(f.path)}:{f.line}:{f.column}', ctx, bold=True)}: "
                    f"{_style(f.code, ctx, fg='red', bold=True)} {sev}: {escape_controls(f.message)}")
            if f.suppressed:
                head += " (suppressed)"
            lines.append(head)
            lines.extend(_frame(src, f, ctx))
            if ctx.show_fixes and f.fix is not None:
                label = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "suggestion"}[f.fix.applicability.value]
                desc = f.fix.description or "available"
                lines.append(f"  {_style('=', ctx, fg='green')} {label}: {desc}")
                if ctx.fix_details and src is not None:
                    lines.extend(_edit_lines(src, f.fix, ctx))
            lines.append("")
    for e in run.errors:
        lines.append(f"{_style('error', ctx, fg='red', bold=True)}: {shown_path(e.path)}: {escape_controls(e.reason)}")
    if ctx.fix_details and run.fixed:
        from .applied import applied_lines

        lines.extend(applied_lines(run, ctx))
    if not ctx.quiet:
        summary = summarize(run, ctx.settings)
        lines.append(summary_line(summary, run.mode.value))
        note = hidden_note(run, ctx)
        if note:
            lines.append(note)
    return "\n".join(lines) + "\n" if lines else ""


def _edit_lines(src, fix, ctx) -> list[str]:
    """--show-fixes: the lines a fix changes, before (-) and after (+)."""
    from .codeview import fix_preview

    preview = fix_preview(src, fix)
    # (code is printed as read: control characters escaped, so no line of it drives the terminal)
    preview = [type(p)(p.kind, escape_controls(p.text)) for p in preview]
    if not preview:
        return ["    (the edit spans more lines than are shown here: see `cuda2hip fix --diff`)"]
    return [f"    {_style(('- ' if p.kind == 'del' else '+ ') + p.text, ctx, fg='red' if p.kind == 'del' else 'green')}"
            for p in preview]


def summary_line(s: dict, mode: str) -> str:
    parts = []
    if mode != "check":
        parts.append(f"Fixed {s['fixed']} finding{'s' if s['fixed'] != 1 else ''} in "
                     f"{s['files_changed']} file{'s' if s['files_changed'] != 1 else ''}.")
    n = s["findings"]
    if n == 0:
        parts.append(f"No findings in {s['files_scanned']} file{'s' if s['files_scanned'] != 1 else ''}."
                     if mode == "check" else "Nothing remains.")
    else:
        sev = ", ".join(f"{v} {k}" for k, v in s["by_severity"].items() if v)
        what = "remain" if mode != "check" else "found"
        parts.append(f"{n} finding{'s' if n != 1 else ''} {what} ({sev}) in "
                     f"{s['files_with_findings']} of {s['files_scanned']} files.")
        hints = []
        if s["fixable"]["safe"] and mode == "check":
            hints.append(f"{s['fixable']['safe']} fixable with `cuda2hip fix`")
        if s["fixable"]["unsafe"]:
            hints.append(f"{s['fixable']['unsafe']} more with `--unsafe-fixes`")
        if hints:
            parts.append("; ".join(hints) + ".")
    if s["suppressed"]:
        parts.append(f"{s['suppressed']} suppressed.")
    if s.get("baselined"):
        parts.append(f"{s['baselined']} in the baseline.")
    if s["errors"]:
        parts.append(f"{len(s['errors'])} file error{'s' if len(s['errors']) != 1 else ''}.")
    parts.append(f"Target: ROCm {s['target_rocm']}.")
    return " ".join(parts)
