"""`--format html`: one self-contained page for reviewers (jinja2 template, inline CSS and JS,
no network): summary (files, findings by severity / rule / effort, manual work left), the
readiness of each folder, filters, per-file sections with the code around each finding, the fix
it proposes and the diff a rewrite applied, and the docs of every rule involved.

The summary, the readiness view and the rule docs are HTML; the findings travel as compact JSON
data (html_data.py) that the page's script turns into the file sections, page by page, as the
filters ask. That keeps a report of thousands of findings a few hundred bytes per finding.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from .. import __version__
from .effort import PORT_MINUTES, SITE_MINUTES, estimate
from .html_data import page_data
from .readiness import FIXABLE, MANUAL, READY, file_states, folders
from .sources import repo_path
from .summary import ESTIMATE_EXPLANATION, format_minutes, summarize

SEVERITIES = ("error", "warning", "info", "hint")


def _inline_code(text: str):
    """Escape `text` and render its `backtick` spans as <code>."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _rule_doc_html(rule) -> str:
    """A rule's documentation (the Markdown of `explain`) as HTML; code blocks are highlighted by
    the page's script, like the code around findings."""
    from markdown_it import MarkdownIt

    from ..rulebook.docs import rule_markdown

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    # The page shows code, id and summary in the section header: skip the Markdown title.
    body = rule_markdown(rule).split("\n", 1)[1]
    return md.render(body)


def _rule_rows(run, engine, s, est) -> tuple[list, list]:
    codes = sorted({f.code for f in run.findings} | {f.code for f in run.fixed})
    rules = [r for r in (engine.rule_by_code(c) for c in codes) if r is not None]
    active = [f for f in run.findings if not f.suppressed]
    severities_by_rule: dict[str, Counter] = defaultdict(Counter)
    for f in active:
        severities_by_rule[f.code][f.severity.label] += 1
    fixed_by_rule = Counter(f.code for f in run.fixed)
    suppressed_by_rule = Counter(f.code for f in run.findings if f.suppressed)
    rows = []
    for r in rules:
        # the severities its findings have (a builder may lower one, e.g. HIP190's info), most
        # severe first; the rule's own where none is left
        found = severities_by_rule.get(r.code)
        shown = [(sev, found[sev]) for sev in SEVERITIES if found and found[sev]] or [(r.severity, 0)]
        rows.append({
            "code": r.code, "id": r.id, "severities": shown, "summary": r.summary, "effort": r.effort,
            "findings": s["by_rule"].get(r.code, 0), "manual": est.findings_by_rule[r.code],
            "minutes": est.minutes_by_rule[r.code], "fixed": fixed_by_rule[r.code],
            "suppressed": suppressed_by_rule[r.code], "fix": r.fix.applicability if r.fix else "",
        })
    return rules, rows


def _readiness(run, root: Path) -> dict:
    states = file_states(run, root)
    rows = folders(states)
    total = Counter(states.values())
    n = sum(total.values())
    return {"folders": rows, "ready": total[READY], "fixable": total[FIXABLE], "manual": total[MANUAL],
            "files": n, "pct": (lambda k: f"{100 * k / n:.0f}" if n else "0")}


def _json_for_script(data) -> str:
    """JSON inside <script type="application/json">: `<` escaped so that no `</script>` (or
    `<!--`) in a message or a line of code can end the element early."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def build_context(run, ctx) -> dict:
    settings = ctx.settings
    root = Path(settings.root)
    s = summarize(run, settings)
    est = estimate([f for f in run.findings if not f.suppressed])
    rules, rule_rows = _rule_rows(run, ctx.engine, s, est)
    data = page_data(run, root, rules, ctx.show_fixes)
    return {
        "version": __version__,
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mode": run.mode.value,
        "root": str(root),
        # (issue 30: the target ROCm release goes beside these in the header)
        "s": s,
        "severities": SEVERITIES,
        "rule_rows": rule_rows,
        "rule_docs": [(r, _rule_doc_html(r)) for r in rules],
        "readiness": _readiness(run, root),
        "port_minutes": PORT_MINUTES,
        "site_minutes": SITE_MINUTES,
        "estimate": format_minutes(s["manual_work"]["minutes"]),
        "estimate_explanation": ESTIMATE_EXPLANATION,
        "format_minutes": format_minutes,
        "errors": [(repo_path(e.path, root), e.reason) for e in run.errors],
        "data_json": _json_for_script(data),
        "frames_cut": data.get("framesCut"),
        "has_files": bool(data["files"]),
    }


def render(run, ctx) -> str:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("cuda2hip.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"], default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["inline_code"] = _inline_code
    return env.get_template("report.html.j2").render(**build_context(run, ctx))
