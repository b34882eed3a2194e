"""`--format json`: one object {"findings": [...], "summary": {...}}."""

from __future__ import annotations

import json

from .summary import shown_path, summarize


def render(run, ctx) -> str:
    findings = [f.to_dict() for f in run.fixed] + [f.to_dict() for f in run.findings]
    for d in findings:
        d["path"] = shown_path(d["path"])
    findings.sort(key=lambda d: (d["path"], d["line"], d["column"], d["code"]))
    payload = {"findings": findings, "summary": summarize(run, ctx.settings)}
    if ctx.extra.get("diffs"):  # `fix --report x.json`: what each changed file became
        from .diff import unified_diff

        payload["changes"] = [{"path": shown_path(r.path), "diff": unified_diff(shown_path(r.path), r.original,
                                                                                r.migrated)}
                              for r in run.files if r.changed]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
