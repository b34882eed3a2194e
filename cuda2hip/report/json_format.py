"""`--format json`: one object {"findings": [...], "summary": {...}}."""

from __future__ import annotations

import json

from .summary import summarize


def render(run, ctx) -> str:
    findings = [f.to_dict() for f in run.fixed] + [f.to_dict() for f in run.findings]
    findings.sort(key=lambda d: (d["path"], d["line"], d["column"], d["code"]))
    payload = {"findings": findings, "summary": summarize(run, ctx.settings.fail_on)}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
