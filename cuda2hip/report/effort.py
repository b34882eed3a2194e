"""The manual-work estimate: what is left for a person after `cuda2hip fix`.

The unit of work is a port: the first finding of a rule about one API (the name a finding is
about, `Finding.extra["api"]`: `cudaFoo` for HIP102, `__shfl_xor_sync` for HIP403) costs the
full effort of porting it; every further site of the same rule and API costs a small per-site
amount (the port is decided, it is applied again). A finding about no particular API (a barrier
in a branch, a hard-coded 32) is a port of its own. Left out: info and hint findings (advice,
nothing to port), findings with a safe fix (the tool applies them), suppressed findings.
Unsafe fixes and suggestions still need a person, so they count.
"""

from __future__ import annotations

from collections import Counter

from msgspec import Struct, field

from ..findings import API, EFFORTS, Severity

# minutes for the first finding of a port, by effort, and for each further site of it
PORT_MINUTES = {"none": 0, "low": 5, "medium": 30, "high": 120}
SITE_MINUTES = {"none": 0, "low": 1, "medium": 5, "high": 10}
EXPLANATION = (
    "Each distinct API a rule reports is ported once, at the finding's effort: low = 5 min, "
    "medium = 30 min, high = 2 h (none = 0); each further place the same rule reports the same "
    "API adds low = 1 min, medium = 5 min, high = 10 min. A finding about no API in particular "
    "(a barrier in a branch, a hard-coded 32) is a port of its own. Left out: info and hint "
    "findings, findings with a safe fix (`cuda2hip fix` applies them) and suppressed ones; unsafe "
    "fixes and suggestions count, they need a review. A planning aid, not a measurement.")


def counts(finding) -> bool:
    """Whether a finding is manual work (see the module docstring)."""
    if finding.suppressed or finding.severity < Severity.WARNING:
        return False
    return finding.fix is None or finding.fix.applicability.value != "safe"


def _port_key(f) -> tuple:
    api = f.extra.get(API)
    return (f.code, api) if api else (f.code, f.path, f.start, f.end)


class Estimate(Struct):
    minutes: int = 0
    findings: int = 0  # findings counted
    ports: int = 0  # distinct (rule, API) ports among them
    by_effort: Counter = field(default_factory=Counter)  # counted findings by effort
    ports_by_effort: Counter = field(default_factory=Counter)
    minutes_by_rule: Counter = field(default_factory=Counter)
    findings_by_rule: Counter = field(default_factory=Counter)
    left_out: Counter = field(default_factory=Counter)  # "info/hint", "safe fix" (unsuppressed findings)

    def as_dict(self) -> dict:
        return {"minutes": self.minutes, "findings": self.findings, "ports": self.ports,
                "by_effort": {e: self.by_effort.get(e, 0) for e in EFFORTS},
                "ports_by_effort": {e: self.ports_by_effort.get(e, 0) for e in EFFORTS},
                "left_out": {"info_or_hint": self.left_out.get("info/hint", 0),
                             "safe_fix": self.left_out.get("safe fix", 0)},
                "minutes_per_effort": dict(PORT_MINUTES), "minutes_per_further_site": dict(SITE_MINUTES),
                "minutes_by_rule": dict(sorted(self.minutes_by_rule.items()))}


def estimate(findings) -> Estimate:
    est = Estimate()
    ports: dict[tuple, list] = {}
    for f in findings:
        if f.suppressed:
            continue
        if not counts(f):
            est.left_out["info/hint" if f.severity < Severity.WARNING else "safe fix"] += 1
            continue
        ports.setdefault(_port_key(f), []).append(f)
    for group in ports.values():
        # the port costs the effort of its hardest finding; the others are further sites
        first = max(group, key=lambda f: EFFORTS.index(f.effort) if f.effort in EFFORTS else 0)
        minutes = PORT_MINUTES.get(first.effort, 0) + sum(
            SITE_MINUTES.get(f.effort, 0) for f in group if f is not first)
        est.minutes += minutes
        est.ports += 1
        est.ports_by_effort[first.effort] += 1
        est.minutes_by_rule[first.code] += minutes
        est.findings += len(group)
        est.findings_by_rule[first.code] += len(group)
        for f in group:
            est.by_effort[f.effort] += 1
    return est
