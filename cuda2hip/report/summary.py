"""Counts shared by every output format, so that all of them tell the same numbers."""

from __future__ import annotations

import re
from collections import Counter

from ..findings import EFFORTS, Severity
from ..lang.lazy_regex import LazyRegex
from .effort import EXPLANATION, estimate

# The manual-work estimate (the model: report/effort.py; stated in docs/reports.md).
ESTIMATE_EXPLANATION = EXPLANATION


# Control characters, and the bytes of a name that is not UTF-8 (read as surrogate escapes).
_CONTROL = LazyRegex(r"[\x00-\x1f\x7f\x85\u2028\u2029\udc80-\udcff]")


def _escaped(m: re.Match) -> str:
    c = m.group()
    return f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else repr(c)[1:-1]


def shown_path(path: str) -> str:
    """A path for a report: a line break or terminal escape in a file name would forge report
    lines, and a name that is not UTF-8 cannot be written in a UTF-8 report, so such names are
    shown escaped (`\\n`, `\\x1b`, `\\xe9` for a byte, backslashes doubled), as Python writes
    strings; other names are shown as they are."""
    if path.isprintable() or not _CONTROL.search(path):  # (printable: no control, no surrogate)
        return path
    return _CONTROL.sub(_escaped, path.replace("\\", "\\\\"))


def visible(findings, show_suppressed: bool = False):
    return [f for f in findings if show_suppressed or not f.suppressed]


def shown(findings, ctx):
    """The findings a line-oriented format lists: at or above `ctx.min_severity`, suppressed
    ones only with --show-suppressed."""
    floor = ctx.min_severity
    return [f for f in findings if (ctx.show_suppressed or not f.suppressed) and f.severity >= floor]


def hidden_note(run, ctx) -> str:
    """The one line that stands for the active findings below `ctx.min_severity` ("" if none)."""
    below = Counter(f.severity for f in run.findings if not f.suppressed and f.severity < ctx.min_severity)
    if not below:
        return ""
    parts = [f"{below[s]} {s.label}" for s in sorted(below, reverse=True)]
    total = sum(below.values())
    lowest = min(below)
    how = "`--show-info`" if lowest == Severity.HINT else f"`--min-severity {lowest.label}`"
    return f"{' and '.join(parts)} finding{'s' if total != 1 else ''} not shown ({how} lists {'them' if total != 1 else 'it'})."


def summarize(run, settings) -> dict:
    """The counts of `run` under `settings` (its --fail-on, and the target release every format names)."""
    fail_on = settings.fail_on
    active = [f for f in run.findings if not f.suppressed]
    suppressed = [f for f in run.findings if f.suppressed]
    threshold = Severity.parse(fail_on)
    by_sev = Counter(f.severity.label for f in active)
    by_rule = Counter(f.code for f in active)
    # the severities a rule's findings have (a rule may lower one: HIP190's project names are info)
    rule_sev: dict[str, Counter] = {}
    for f in active:
        rule_sev.setdefault(f.code, Counter())[f.severity] += 1
    by_effort = Counter(f.effort for f in active)
    fixable = Counter(f.fix.applicability.value for f in active if f.fix is not None)
    return {
        "mode": run.mode.value,
        "target_rocm": settings.target_rocm,
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
        "by_rule_severity": {code: {sev.label: n for sev, n in sorted(c.items(), reverse=True)}
                             for code, c in sorted(rule_sev.items())},
        "by_effort": {e: by_effort.get(e, 0) for e in EFFORTS},
        "fixable": {k: fixable.get(k, 0) for k in ("safe", "unsafe", "display-only")},
        "errors": [{"path": shown_path(e.path), "reason": e.reason} for e in run.errors],
        "baselined": run.baselined,
        "manual_work": estimate(active).as_dict(),
    }


def format_minutes(minutes: int) -> str:
    """`95` -> `1 h 35 min`; `0` -> `none`."""
    if minutes <= 0:
        return "none"
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")
