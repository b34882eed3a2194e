"""`--statistics`: how many findings each rule produced (like `ruff --statistics`), as text
columns or, with `--format json`, a JSON list. Counts come from summary.py, so they add up to
the same totals as every other format."""

from __future__ import annotations

import json
from collections import Counter

from .summary import summarize


def rows(run, ctx) -> list[dict]:
    s = summarize(run, ctx.settings)
    safe = Counter(f.code for f in run.findings
                   if not f.suppressed and f.fix is not None and f.fix.applicability.value == "safe")
    out = []
    for code, count in sorted(s["by_rule"].items(), key=lambda kv: (-kv[1], kv[0])):
        rule = ctx.engine.rule_by_code(code)
        out.append({"code": code, "id": rule.id if rule else "", "count": count, "fixable": safe[code],
                    "severity": rule.severity if rule else "", "summary": rule.summary if rule else ""})
    return out


def render(run, ctx) -> str:
    data = rows(run, ctx)
    if ctx.extra.get("json"):
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if not data:
        return "" if ctx.quiet else "No findings.\n"
    total = sum(r["count"] for r in data)
    width = len(str(total))
    code_w = max(len(r["code"]) for r in data)
    id_w = max(len(r["id"]) for r in data)
    lines = [f"{r['count']:>{width}}  {r['code']:<{code_w}}  {'[*]' if r['fixable'] == r['count'] else '[-]' if r['fixable'] else '   '}  "
             f"{r['id']:<{id_w}}  {r['summary']}".rstrip() for r in data]
    lines.append(f"{total:>{width}}  total at target ROCm {ctx.settings.target_rocm}; [*] all fixable with "
                 "`cuda2hip fix`, [-] some")
    return "\n".join(lines) + "\n"
