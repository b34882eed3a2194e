"""`--format api-csv`: one CSV row per CUDA API name the run found, like hipify-clang's
`--print-stats-csv`: how many uses, how many the migration converts, how many are left and why.

Where the numbers come from (docs/reports.md, "Per-API summary"):
- Uses are the occurrences the name-table rules report: `rename` (a HIP name exists:
  HIP101, HIP103, ...), `unmapped` (HIP102: none, or none at the target ROCm), `legacy-api`
  (HIP123) and the unknown CUDA names of `unknown-cuda-name` (HIP190). Each occurrence of a name
  is reported by one of them, and their findings carry the CUDA name (`data.api`).
- Converted: the uses whose fix `fix` applied; for `check`, the uses whose fix `cuda2hip fix`
  would apply with the same options (safe fixes; unsafe ones with --unsafe-fixes). The rest are
  left, each with its reason: the table's (no HIP equivalent, needs a newer ROCm, experimental),
  an unsafe fix not applied, a suggestion only, suppressed.
- Other C/C++ rules whose warnings and errors name a CUDA function, type or field (`data.api`,
  e.g. HIP131 argument-count-differs on `cudaGraphExecUpdate`, HIP133 on `__nanosleep`) add their
  open findings to `open_findings` and to `why`; a name only they report gets its uses from them.
  Headers, inline PTX, preprocessor conditions and build flags are not API names: not listed.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

from ..findings import API, Severity

NAME_KINDS = frozenset({"rename", "unmapped", "legacy-api", "unknown-cuda-name"})
# a function, type, macro or `ns::name`, or a CUDA struct's field (`cudaFoo.field`): not a
# header, inline PTX (`mma.sync.aligned...`) or a preprocessor condition
_NAME = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*\Z")
_FIELD = re.compile(r"(?:cuda|cu|CU|nv|__nv)[A-Za-z_]\w*\.[A-Za-z_]\w*\Z")
COLUMNS = ("cuda_api", "library", "hip_api", "uses", "converted", "left", "open_findings", "why")


class _Row:
    __slots__ = ("library", "hip", "uses", "converted", "why", "other", "other_converted", "other_why")

    def __init__(self):
        self.library = self.hip = ""
        self.uses = self.converted = self.other = self.other_converted = 0
        self.why: Counter = Counter()
        self.other_why: Counter = Counter()


def _left_reason(f, rule) -> str:
    if f.suppressed:
        return "suppressed"
    reason = f.extra.get("reason")
    if reason:
        return reason
    if f.fix is not None:
        kind = f.fix.applicability.value
        if kind == "unsafe":
            return "unsafe fix not applied (review it; `--unsafe-fixes`)"
        if kind == "display-only":
            return "a suggestion only: needs a person"
    return f"{rule.code} {rule.id}: {rule.summary}"


def rows(run, ctx) -> list[dict]:
    engine = ctx.engine
    check = run.mode.value == "check"
    unsafe_ok = bool(getattr(ctx.settings, "unsafe_fixes", False))
    table: dict[str, _Row] = {}

    def converts(f) -> bool:
        if not check or f.suppressed or f.fix is None:
            return False
        kind = f.fix.applicability.value
        return kind == "safe" or (kind == "unsafe" and unsafe_ok)

    for f, fixed in [(f, True) for f in run.fixed] + [(f, False) for f in run.findings]:
        api = f.extra.get(API) if f.extra else None
        if not api or not (_NAME.match(api) or _FIELD.match(api)):
            continue
        rule = engine.rule_by_code(f.code)
        if rule is None or rule.language != "cuda":
            continue
        if rule.kind not in NAME_KINDS and f.severity < Severity.WARNING:
            continue  # advice about a name (HIP406's `__shfl` semantics), nothing left to port
        row = table.get(api)
        if row is None:
            row = table[api] = _Row()
        done = fixed or converts(f)
        if rule.kind in NAME_KINDS:
            row.uses += 1
            row.library = row.library or f.extra.get("library", "")
            row.hip = row.hip or f.extra.get("hip", "")
            if done:
                row.converted += 1
            else:
                row.why[_left_reason(f, rule)] += 1
        else:
            row.other += 1
            if done:
                row.other_converted += 1
            else:
                row.other_why[f"{rule.code} {rule.id}"] += 1
    out = []
    for api, row in table.items():
        if row.uses:
            uses, converted, why = row.uses, row.converted, row.why
        else:  # a name only other rules report: their findings are its uses
            uses, converted, why = row.other, row.other_converted, row.other_why
        open_other = sum(row.other_why.values()) if row.uses else 0
        reasons = [f"{text} (×{n})" if n > 1 else text for text, n in why.most_common()]
        if row.uses:
            reasons += [f"{text} (×{n})" if n > 1 else text for text, n in row.other_why.most_common()]
        out.append({"cuda_api": api, "library": row.library, "hip_api": row.hip, "uses": uses,
                    "converted": converted, "left": uses - converted, "open_findings": open_other,
                    "why": "; ".join(reasons)})
    out.sort(key=lambda r: (-r["left"], -r["open_findings"], -r["uses"], r["cuda_api"]))
    return out


def render(run, ctx) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(run, ctx))
    return buf.getvalue()
