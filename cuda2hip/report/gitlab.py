"""`--format gitlab`: a GitLab Code Quality report (the Code Climate issue subset GitLab reads):
a JSON array with one object per finding, shown on merge requests.

Each object has `description` (the message), `check_name` (the rule code), `fingerprint` (the
baseline's line-shift-proof fingerprint: unique within a report, as GitLab requires),
`severity` (hint -> info, info -> minor, warning -> major, error -> critical) and `location`
(`path` relative to the project root, `lines.begin` / `lines.end`). A file that could not be
processed is a `blocker` with check_name `file-error`. Like the other line formats it lists the
findings at or above --min-severity; suppressed findings are left out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .fingerprint import fingerprints
from .sources import Sources, repo_path
from .summary import shown

SEVERITIES = {"hint": "info", "info": "minor", "warning": "major", "error": "critical"}


def render(run, ctx) -> str:
    root = Path(ctx.settings.root)
    findings = sorted((f for f in shown(run.findings, ctx) if not f.suppressed), key=lambda f: f.sort_key)
    prints = fingerprints(findings, root, Sources(run))
    issues = []
    for f in findings:
        issues.append({
            "type": "issue",
            "engine_name": "cuda2hip",
            "check_name": f.code,
            "description": f"{f.code} {f.message}",
            "categories": ["Compatibility"],
            "severity": SEVERITIES[f.severity.label],
            "fingerprint": prints[id(f)],
            "location": {"path": repo_path(f.path, root), "lines": {"begin": f.line, "end": f.end_line}},
        })
    for e in run.errors:
        path = repo_path(e.path, root)
        issues.append({
            "type": "issue",
            "engine_name": "cuda2hip",
            "check_name": "file-error",
            "description": f"cuda2hip could not process this file: {e.reason}",
            "categories": ["Bug Risk"],
            "severity": "blocker",
            "fingerprint": hashlib.sha256(f"file-error\0{path}\0{e.reason}".encode("utf-8")).hexdigest()[:32],
            "location": {"path": path, "lines": {"begin": 1}},
        })
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
