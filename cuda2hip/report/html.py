"""`--format html`: one self-contained page for reviewers (jinja2 template, inline CSS and JS,
no network): summary (files, findings by severity / rule / effort, manual work left), filters,
per-file sections with highlighted code around each finding, the fix it proposes and the diff
a rewrite applied, and the docs of every rule involved."""

from __future__ import annotations

import datetime
import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from . import codeview
from .diff import unified_diff
from .effort import PORT_MINUTES, SITE_MINUTES, estimate
from .sources import Sources, repo_path
from .summary import ESTIMATE_EXPLANATION, format_minutes, summarize

# Code frames and fix previews are most of a finding's size: past this many findings the
# page lists findings without them (a note says so), so a huge run stays a loadable page.
MAX_CODE_FRAMES = 5000
FIX_LABELS = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": "suggestion"}
SEVERITIES = ("error", "warning", "info", "hint")


@dataclass
class FindingView:
    index: int
    code: str
    rule_id: str
    severity: str
    line: int
    column: int
    message: str
    effort: str
    suppressed: bool
    fix_kind: str | None
    fix_label: str | None
    fix_description: str
    frame: list
    preview: list


@dataclass
class FileView:
    anchor: str
    path: str
    findings: list[FindingView] = field(default_factory=list)
    fixed: list[tuple[str, str, int]] = field(default_factory=list)  # (code, rule id, count)
    diff: list[tuple[str, str]] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    error: str | None = None

    @property
    def active(self) -> list[FindingView]:
        return [f for f in self.findings if not f.suppressed]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.active if f.severity == severity)


def _inline_code(text: str):
    """Escape `text` and render its `backtick` spans as <code>."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _rule_doc_html(rule) -> str:
    from markdown_it import MarkdownIt
    from pygments import highlight as pyg_highlight
    from pygments.formatters import HtmlFormatter

    from ..rulebook.docs import rule_markdown

    def fence(code, lang, _attrs):
        lexer = codeview._lexer(f"x.{'cu' if lang == 'cuda' else lang or 'txt'}")
        return f'<pre class="hl">{pyg_highlight(code, lexer, HtmlFormatter(nowrap=True))}</pre>'

    md = MarkdownIt("commonmark", {"html": False, "highlight": fence}).enable("table")
    # The page shows code, id and summary in the section header: skip the Markdown title.
    body = rule_markdown(rule).split("\n", 1)[1]
    return md.render(body)


def _file_view(result, findings, sources: Sources, root: Path, ids, show_fixes: bool, budget: list[int]) -> FileView:
    rel = repo_path(result.path, root)
    view = FileView(anchor=f"file-{next(ids)}", path=rel)
    src = sources.get(result.path) if findings and budget[0] > 0 else None
    lines = codeview.highlight(src, result.path) if src is not None else []
    for f in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        if budget[0] <= 0:
            src, lines = None, []
        budget[0] -= 1
        kind = f.fix.applicability.value if f.fix is not None else None
        view.findings.append(FindingView(
            index=next(ids), code=f.code, rule_id=f.rule_id, severity=f.severity.label, line=f.line,
            column=f.column, message=f.message, effort=f.effort, suppressed=f.suppressed, fix_kind=kind,
            fix_label=FIX_LABELS[kind] if kind else None,
            fix_description=(f.fix.description or "") if f.fix is not None else "",
            frame=codeview.frame(lines, f),
            preview=codeview.fix_preview(src, f.fix) if (show_fixes and src is not None and f.fix is not None) else [],
        ))
    fixed = Counter((f.code, f.rule_id) for f in result.fixed)
    view.fixed = [(code, rid, n) for (code, rid), n in sorted(fixed.items())]
    if result.changed:
        view.diff = codeview.diff_lines(unified_diff(rel, result.original, result.migrated))
        view.added = sum(1 for k, _ in view.diff if k == "add")
        view.removed = sum(1 for k, _ in view.diff if k == "del")
    if result.error is not None:
        view.error = result.error.reason
    return view


def build_context(run, ctx) -> dict:
    settings = ctx.settings
    root = Path(settings.root)
    s = summarize(run, settings)
    sources = Sources(run)
    by_path = defaultdict(list)
    for f in run.findings:  # suppressed ones too: the page hides them until asked
        by_path[f.path].append(f)
    files, ids, budget = [], itertools.count(1), [MAX_CODE_FRAMES]
    for r in sorted(run.files, key=lambda r: repo_path(r.path, root)):
        if by_path.get(r.path) or r.changed or r.fixed or r.error is not None:
            files.append(_file_view(r, by_path.get(r.path, []), sources, root, ids, ctx.show_fixes, budget))
    engine = ctx.engine
    codes = sorted({f.code for f in run.findings} | {f.code for f in run.fixed})
    rules = [r for r in (engine.rule_by_code(c) for c in codes) if r is not None]
    active = [f for f in run.findings if not f.suppressed]
    est = estimate(active)
    severities_by_rule: dict[str, Counter] = defaultdict(Counter)
    for f in active:
        severities_by_rule[f.code][f.severity.label] += 1
    fixed_by_rule = Counter(f.code for f in run.fixed)
    suppressed_by_rule = Counter(f.code for f in run.findings if f.suppressed)
    rule_rows = []
    for r in rules:
        # the severities its findings have (a builder may lower one, e.g. HIP190's info), most
        # severe first; the rule's own where none is left
        found = severities_by_rule.get(r.code)
        shown = [(sev, found[sev]) for sev in SEVERITIES if found and found[sev]] or [(r.severity, 0)]
        rule_rows.append({
            "code": r.code, "id": r.id, "severities": shown, "summary": r.summary, "effort": r.effort,
            "findings": s["by_rule"].get(r.code, 0), "manual": est.findings_by_rule[r.code],
            "minutes": est.minutes_by_rule[r.code], "fixed": fixed_by_rule[r.code],
            "suppressed": suppressed_by_rule[r.code], "fix": r.fix.applicability if r.fix else "",
        })
    return {
        "version": __version__,
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mode": run.mode.value,
        "root": str(root),
        "s": s,
        "severities": SEVERITIES,
        "files": files,
        "rule_rows": rule_rows,
        "rule_docs": [(r, _rule_doc_html(r)) for r in rules],
        "port_minutes": PORT_MINUTES,
        "site_minutes": SITE_MINUTES,
        "estimate": format_minutes(s["manual_work"]["minutes"]),
        "estimate_explanation": ESTIMATE_EXPLANATION,
        "format_minutes": format_minutes,
        "errors": [(repo_path(e.path, root), e.reason) for e in run.errors],
        "pyg_light": codeview.pygments_css(".hl", "default"),
        "pyg_dark": codeview.pygments_css(".hl", "github-dark"),
        "frames_cut": MAX_CODE_FRAMES if budget[0] < 0 else None,
    }


def render(run, ctx) -> str:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("cuda2hip.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"], default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["inline_code"] = _inline_code
    return env.get_template("report.html.j2").render(**build_context(run, ctx))
