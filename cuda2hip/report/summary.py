"""Counts shared by every output format, so that all of them tell the same numbers."""

from __future__ import annotations

from collections import Counter

from ..findings import EFFORTS, Severity

# Manual-work estimate: minutes a reviewer spends on one remaining finding, by its effort.
# Findings with a safe fix cost nothing: `cuda2hip fix` applies them. Unsafe fixes still need a
# review, so they count like findings without a fix.
EFFORT_MINUTES = {"none": 0, "low": 5, "medium": 30, "high": 120}
ESTIMATE_EXPLANATION = (
    "Each remaining finding that `cuda2hip fix` cannot apply safely counts by its effort: "
    "none = 0 min, low = 5 min, medium = 30 min, high = 2 h; findings with a safe fix count 0 "
    "because the tool applies them. A rough guide for planning, not a measurement.")


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
    manual = [f for f in active if f.fix is None or f.fix.applicability.value != "safe"]
    minutes = sum(EFFORT_MINUTES.get(f.effort, 0) for f in manual)
    manual_by_effort = Counter(f.effort for f in manual)
    return {
        "mode": run.mode.value,
        "files_scanned": run.files_scanned,
        "files_with_findings": len({f.path for f in active}),
        "files_changed": run.files_changed,
        "findings": len(active),
        "suppressed": len(suppressed),
        "fixed": run.fixed_count,
        "failing": sum(1 for f in active if f.severity >= threshold),
        "fail_on": fail_on,
        "by_severity": {s.label: by_sev.get(s.label, 0) for s in sorted(Severity, reverse=True)},
        "by_rule": dict(sorted(by_rule.items())),
        "by_effort": {e: by_effort.get(e, 0) for e in EFFORTS},
        "fixable": {k: fixable.get(k, 0) for k in ("safe", "unsafe", "display-only")},
        "errors": [e.to_dict() for e in run.errors],
        "baselined": run.baselined,
        "manual_work": {"minutes": minutes, "findings": len(manual),
                        "by_effort": {e: manual_by_effort.get(e, 0) for e in EFFORTS},
                        "minutes_per_effort": dict(EFFORT_MINUTES)},
    }


def format_minutes(minutes: int) -> str:
    """`95` -> `1 h 35 min`; `0` -> `none`."""
    if minutes <= 0:
        return "none"
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")
