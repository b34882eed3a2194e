"""`--format markdown`: a pull-request comment. The summary tables (severity, rule, effort and the
manual-work estimate) in full, the readiness of the top folders, then the findings that matter
most (what needs a person, then safe fixes, then advice; the most severe and hardest first) in a
collapsible list per file, one line for the findings of a rule with the same message (its
positions listed), then, for `fix --report x.md`, the diff of every changed file.

A PR comment holds 65,536 characters: the report stays within `markdown-limit` (that by
default; 0: no limit). What does not fit is left out, most severe kept, and a last line says
how much was left out and how to get all of it.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path

from ..findings import EFFORTS
from .diff import unified_diff
from .readiness import category
from .sources import repo_path
from .summary import ESTIMATE_EXPLANATION, format_minutes, summarize, visible

SEVERITY_ICONS = {"error": "🔴", "warning": "🟠", "info": "🔵", "hint": "⚪"}
FIX_LABELS = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": "suggestion"}
# room kept for the line that says what was left out
TRAILER_RESERVE = 600


def size(text: str) -> int:
    """Length as GitHub may count it at most: UTF-16 code units (an emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


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


def _summary(run, ctx, s) -> list[str]:
    mode = run.mode.value
    out = []
    head = (f"{_plural(s['findings'], 'finding')} in {s['files_with_findings']} of "
            f"{_plural(s['files_scanned'], 'file')}" if s["findings"] else
            f"no findings in {_plural(s['files_scanned'], 'file')}")
    out += [f"## cuda2hip: {head}", "", f"Target: ROCm {s['target_rocm']} (`--target-rocm`).", ""]
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
    mw = s["manual_work"]
    rows += [("File errors", len(s["errors"])),
             ("Manual work left (estimate)", f"{format_minutes(mw['minutes'])}" + (
                 f" ({_plural(mw['ports'], 'port')}, {_plural(mw['findings'], 'finding')})" if mw["ports"] else ""))]
    out += ["| | |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows] + [""]
    if not s["findings"]:
        return out
    out += ["| Severity | Findings |", "|---|---:|"]
    out += [f"| {SEVERITY_ICONS[k]} {k} | {v} |" for k, v in s["by_severity"].items() if v]
    out += ["", "| Rule | Findings | Severity | Effort | Estimate | Summary |", "|---|---:|---|---|---:|---|"]
    for code, n in s["by_rule"].items():
        rule = ctx.engine.rule_by_code(code)
        sevs = s["by_rule_severity"][code]
        severity = ", ".join(sev if len(sevs) == 1 else f"{sev} {k}" for sev, k in sevs.items())
        out.append(f"| `{code}` {rule.id if rule else ''} | {n} | {severity} | {rule.effort if rule else ''} | "
                   f"{format_minutes(mw['minutes_by_rule'].get(code, 0))} | {_cell(rule.summary) if rule else ''} |")
    fixable = s["fixable"]
    if fixable["safe"] and run.mode.value == "check":
        out += ["", f"{_plural(fixable['safe'], 'finding')} can be fixed with `cuda2hip fix`"
                + (f"; {fixable['unsafe']} more with `--unsafe-fixes`." if fixable["unsafe"] else ".")]
    left = mw["left_out"]
    out += ["", f"<sub>{ESTIMATE_EXPLANATION} Left out here: {left['info_or_hint']} info / hint, "
                f"{left['safe_fix']} with a safe fix.</sub>", ""]
    return out


_WORK_ORDER = {"manual": 0, "fix": 1, "advice": 2}


def _priority(f) -> tuple:
    """What a person must do first (readiness.category: manual work, then safe fixes, then
    advice), the most severe and the hardest first, then where they are."""
    return (f.suppressed, _WORK_ORDER[category(f)], -int(f.severity),
            -(EFFORTS.index(f.effort) if f.effort in EFFORTS else 0), f.path, f.line, f.column, f.code)


MAX_POSITIONS = 12  # positions listed on one line; the rest are counted


def _group_key(f) -> tuple:
    return (f.path, f.code, f.message, f.fix.applicability.value if f.fix is not None else None, f.suppressed)


def _finding_line(group: list) -> str:
    """One line for the findings of one rule with the same message in one file (a name renamed
    in twelve places is one line with twelve positions)."""
    f = group[0]
    extra = f" ({FIX_LABELS[f.fix.applicability.value]})" if f.fix is not None else ""
    if f.suppressed:
        extra += " (suppressed)"
    where = ", ".join(f"{g.line}:{g.column}" for g in group[:MAX_POSITIONS])
    if len(group) > MAX_POSITIONS:
        where += f" and {len(group) - MAX_POSITIONS} more"
    return (f"- {SEVERITY_ICONS[f.severity.label]} line{'s' if len(group) > 1 else ''} {where} "
            f"**{f.code}** {_text(f.message)}{extra}")


def _file_open(path: str, root: Path, n: int, shown: int) -> list[str]:
    count = _plural(n, "finding") + (f", {shown} shown" if shown < n else "")
    return [f"<details><summary><code>{html.escape(repo_path(path, root))}</code>: {count}</summary>", ""]


FILE_CLOSE = ["", "</details>", ""]


class _Budget:
    def __init__(self, limit: int, used: int):
        self.left = limit - used - TRAILER_RESERVE if limit > 0 else None

    def take(self, cost: int) -> bool:
        if self.left is None:
            return True
        if cost > self.left:
            self.left = -1  # nothing after the first that does not fit: the order is the priority
            return False
        self.left -= cost
        return True


def _findings(run, ctx, root: Path, budget: _Budget) -> tuple[list[str], int]:
    """The per-file lists of the findings that fit, and how many did not."""
    items = sorted(visible(run.findings, ctx.show_suppressed), key=_priority)
    totals = defaultdict(int)
    groups: dict[tuple, list] = {}
    for f in items:  # in priority order: a group's place is its most important finding's
        totals[f.path] += 1
        groups.setdefault(_group_key(f), []).append(f)
    chosen: dict[str, list] = {}
    for group in groups.values():
        group.sort(key=lambda g: (g.line, g.column))
        path = group[0].path
        line = _finding_line(group)
        cost = size(line) + 1
        if path not in chosen:  # (", N shown" at its longest)
            cost += size("\n".join(_file_open(path, root, totals[path] + 1, totals[path]) + FILE_CLOSE)) + 1
        if not budget.take(cost):
            break
        chosen.setdefault(path, []).append((group, line))
    out = []
    for path, shown in chosen.items():  # the file of the most severe finding first
        out += _file_open(path, root, totals[path], sum(len(g) for g, _ in shown))
        out += [line for _, line in sorted(shown, key=lambda x: (x[0][0].line, x[0][0].column, x[0][0].code))]
        out += FILE_CLOSE
    return out, len(items) - sum(len(g) for v in chosen.values() for g, _ in v)


MAX_FOLDERS = 15


def _folders(run, root: Path, budget: _Budget) -> list[str]:
    """The readiness of the top folders (readiness.py), those with the most files needing a
    person first; a last row counts the others. Whole or not at all."""
    from .readiness import file_states, folders

    every = folders(file_states(run, root))
    rows = [f for f in every if f.depth <= 1]
    if len(rows) < 5:  # few top folders: their subfolders too
        rows = [f for f in every if f.depth <= 2]
    if len(rows) < 3:  # the root and one folder: the summary says it all
        return []
    top, rest = rows[0], sorted(rows[1:], key=lambda f: (-f.counts["manual"], -f.files, f.path))
    shown, hidden = rest[:MAX_FOLDERS], rest[MAX_FOLDERS:]

    def row(name, c, n):
        return (f"| {name} | {n} | {c['ready']} ({100 * c['ready'] / n:.0f}%) | {c['fixable']} | {c['manual']} |")

    out = ["| Folder | Files | Nothing left to do | Only safe fixes | Needs a person |", "|---|---:|---:|---:|---:|"]
    out.append(row("(all)", top.counts, top.files))
    out += [row(f"`{_cell(f.path)}/`", f.counts, f.files) for f in shown]
    if hidden:
        c = sum((f.counts for f in hidden), Counter())
        out.append(row(f"{len(hidden)} more folders", c, sum(f.files for f in hidden)))
    out.append("")
    if not budget.take(size("\n".join(out)) + 1):
        return []
    return out


def _errors(s, root: Path, budget: _Budget) -> tuple[list[str], int]:
    lines = []
    for e in s["errors"]:
        line = f"- `{repo_path(e['path'], root)}`: {_text(e['reason'])}"
        if not budget.take(size(line) + 1):
            break
        lines.append(line)
    return (["### File errors", ""] + lines + [""] if lines else []), len(s["errors"]) - len(lines)


def _diffs(run, root: Path, budget: _Budget) -> tuple[list[str], int]:
    out, left = [], 0
    for r in (r for r in run.files if r.changed):
        rel = repo_path(r.path, root)
        diff = unified_diff(rel, r.original, r.migrated)
        fence = "````" if "```" in diff else "```"
        block = [f"<details><summary><code>{html.escape(rel)}</code></summary>", "", f"{fence}diff",
                 diff.rstrip("\n"), fence, "", "</details>", ""]
        if left or not budget.take(size("\n".join(block)) + 1):
            left += 1
            continue
        out += block
    return (["### Changes", ""] + out if out else []), left


def render(run, ctx) -> str:
    s = summarize(run, ctx.settings)
    root = Path(ctx.settings.root)
    limit = ctx.settings.markdown_limit
    out = _summary(run, ctx, s)
    budget = _Budget(limit, size("\n".join(out)) + size("### File errors\n\n\n### Changes\n\n"))
    out += _folders(run, root, budget)
    errors, errors_left = _errors(s, root, budget)
    listed, findings_left = _findings(run, ctx, root, budget) if s["findings"] else ([], 0)
    out += listed + errors
    diffs_left = 0
    if ctx.extra.get("diffs"):
        changes, diffs_left = _diffs(run, root, budget)
        out += changes
    parts = []
    if findings_left:
        parts.append(f"{findings_left} of {len(visible(run.findings, ctx.show_suppressed))} findings")
    if errors_left:
        parts.append(f"{errors_left} of {len(s['errors'])} file errors")
    if diffs_left:
        parts.append(_plural(diffs_left, "diff"))
    if parts:
        out += [f"**Not shown: {', '.join(parts)}**, to keep this report within {limit:,} characters "
                "(`markdown-limit`; what needs a person comes first, then safe fixes, then advice; the most "
                "severe first). `--markdown-limit 0` shows "
                "everything; `--format html` and `--format json` hold every finding.", ""]
    return "\n".join(out).rstrip("\n") + "\n"
