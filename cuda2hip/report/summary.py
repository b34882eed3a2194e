"""Counts shared by every output format, so that all of them tell the same numbers."""

from __future__ import annotations

from collections import Counter

from ..findings import EFFORTS, Severity


def visible(findings, show_suppressed: bool = False):
    return [f for f in findings if show_suppressed or not f.suppressed]


def summarize(run, fail_on: str = "warning") -> dict:
    active = [f for f in run.findings if not f.suppressed]
    suppressed = [f for f in run.findings if f.suppressed]
    threshold = Severity.parse(fail_on)
    by_sev = Counter(f.severity.label for f in active)
    by_rule = Counter(f.code for f in active)
    by_effort = Counter(f.effort for f in active)
    fixable = Counter(f.fix.applicability.value for f in active if f.fix is not None)
    return {
        "mode": run.mode.value,
        "files_scanned": run.files_scanned,
        "files_with_findings": len({f.path for f in active}),
        "files_changed": run.files_changed,
        "findings": len(active),
        "suppressed": len(suppressed),
        "fixed": len(run.fixed),
        "failing": sum(1 for f in active if f.severity >= threshold),
        "fail_on": fail_on,
        "by_severity": {s.label: by_sev.get(s.label, 0) for s in sorted(Severity, reverse=True)},
        "by_rule": dict(sorted(by_rule.items())),
        "by_effort": {e: by_effort.get(e, 0) for e in EFFORTS},
        "fixable": {k: fixable.get(k, 0) for k in ("safe", "unsafe", "display-only")},
        "errors": [e.to_dict() for e in run.errors],
    }
