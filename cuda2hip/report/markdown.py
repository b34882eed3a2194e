"""`--format markdown`: a pull-request comment. A summary table (severity, rule, effort and the
manual-work estimate), then one collapsible list per file. `fix --report x.md` adds the diff of
every changed file."""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from .diff import unified_diff
from .sources import repo_path
from .summary import ESTIMATE_EXPLANATION, format_minutes, summarize, visible

SEVERITY_ICONS = {"error": "🔴", "warning": "🟠", "info": "🔵", "hint": "⚪"}
FIX_LABELS = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": "suggestion"}


def _text(text: str) -> str:
    """Markdown text outside `code spans` with `<` and `&` escaped, so GitHub does not read
    `<cuda_runtime.h>` as an HTML tag."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = html.escape(parts[i], quote=False)
    return "`".join(parts)


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render(run, ctx) -> str:
    s = summarize(run, ctx.settings.fail_on)
    root = Path(ctx.settings.root)
    mode = run.mode.value
    out = []
    head = (f"{_plural(s['findings'], 'finding')} in {s['files_with_findings']} of "
            f"{_plural(s['files_scanned'], 'file')}" if s["findings"] else
            f"no findings in {_plural(s['files_scanned'], 'file')}")
    out += [f"## cuda2hip: {head}", ""]
    if mode != "check":
        out += [f"Fixed {_plural(s['fixed'], 'finding')} in {_plural(s['files_changed'], 'file')}"
                + (" (preview: nothing written)." if mode == "preview" else "."), ""]
    rows = [("Files scanned", s["files_scanned"]), ("Files with findings", s["files_with_findings"])]
    if mode != "check":
        rows.append(("Files changed", s["files_changed"]))
    rows += [("Findings", s["findings"]),
            (f"Failing (≥ {s['fail_on']})", s["failing"]), ("Suppressed", s["suppressed"])]
    if s["baselined"]:
        rows.append(("In the baseline", s["baselined"]))
    if mode != "check":
        rows.append(("Fixed", s["fixed"]))
    rows += [("File errors", len(s["errors"])),
             ("Manual work left (estimate)", format_minutes(s["manual_work"]["minutes"]))]
    out += ["| | |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows] + [""]
    if s["findings"]:
        out += ["| Severity | Findings |", "|---|---:|"]
        out += [f"| {SEVERITY_ICONS[k]} {k} | {v} |" for k, v in s["by_severity"].items() if v]
        out += ["", "| Rule | Findings | Severity | Effort | Summary |", "|---|---:|---|---|---|"]
        for code, n in s["by_rule"].items():
            rule = ctx.engine.rule_by_code(code)
            out.append(f"| `{code}` {rule.id if rule else ''} | {n} | {rule.severity if rule else ''} | "
                       f"{rule.effort if rule else ''} | {_cell(rule.summary) if rule else ''} |")
        fixable = s["fixable"]
        if fixable["safe"] and mode == "check":
            out += ["", f"{_plural(fixable['safe'], 'finding')} can be fixed with `cuda2hip fix`"
                    + (f"; {fixable['unsafe']} more with `--unsafe-fixes`." if fixable["unsafe"] else ".")]
        out += ["", f"<sub>{ESTIMATE_EXPLANATION}</sub>", ""]
        by_file = defaultdict(list)
        for f in visible(run.findings, ctx.show_suppressed):
            by_file[f.path].append(f)
        for path in sorted(by_file):
            items = sorted(by_file[path], key=lambda f: (f.line, f.column, f.code))
            out += [f"<details><summary><code>{html.escape(repo_path(path, root))}</code>: "
                    f"{_plural(len(items), 'finding')}</summary>", ""]
            for f in items:
                extra = f" ({FIX_LABELS[f.fix.applicability.value]})" if f.fix is not None else ""
                if f.suppressed:
                    extra += " (suppressed)"
                out.append(f"- {SEVERITY_ICONS[f.severity.label]} line {f.line}:{f.column} "
                           f"**{f.code}** {_text(f.message)}{extra}")
            out += ["", "</details>", ""]
    if s["errors"]:
        out += ["### File errors", ""] + [f"- `{repo_path(e['path'], root)}`: {_text(e['reason'])}" for e in s["errors"]] + [""]
    if ctx.extra.get("diffs"):
        changed = [r for r in run.files if r.changed]
        if changed:
            out += ["### Changes", ""]
            for r in changed:
                rel = repo_path(r.path, root)
                diff = unified_diff(rel, r.original, r.migrated)
                fence = "````" if "```" in diff else "```"
                out += [f"<details><summary><code>{html.escape(rel)}</code></summary>", "", f"{fence}diff",
                        diff.rstrip("\n"), fence, "", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"
