"""`cuda2hip coverage`: account for every CUDA name of the API tables under the run's settings.

Each name is either renamed (a rename rule writes its HIP/roc* name), kept (the HIP name is the
CUDA name, e.g. `__expf`), or flagged by HIP102 with a reason (no equivalent, needs a newer
ROCm, experimental, not in this library profile). With `--tables DIR` (a folder of HIPIFY's
docs/reference/tables), every row of every reference table is checked against the generated data
as well, so that the accounting covers 100% of the source rows, duplicates and rows shared by two libraries included.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..api.tables import load_table, resolve_tables
from ..checks.api.rename import resolve_for

STATUSES = ("renamed", "same-name", "flagged")


@dataclass
class LibraryCoverage:
    library: str
    names: int = 0
    status: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)  # flagged: reason kind -> count
    rename_rule: str | None = None  # code of the rename rule loading the table
    unmapped_rule: str | None = None
    source_rows: int | None = None  # rows of the reference tables (with --tables)
    source_accounted: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        # (an empty table, such as cuFile's until a header declares a hipFile name, needs no rename rule)
        if self.problems or (self.rename_rule is None and self.names) or self.unmapped_rule is None:
            return False
        return self.source_rows is None or self.source_rows == self.source_accounted

    def to_dict(self) -> dict:
        return {"library": self.library, "names": self.names, **{s: self.status[s] for s in STATUSES},
                "flagged_reasons": dict(self.reasons), "rename_rule": self.rename_rule,
                "unmapped_rule": self.unmapped_rule, "source_rows": self.source_rows,
                "source_rows_accounted": self.source_accounted, "complete": self.complete,
                "problems": self.problems}


def _reason_kind(reason: str) -> str:
    for key, label in (("declared by no header", "no header declares it"), ("experimental", "experimental"), ("needs ROCm", "needs newer ROCm"),
                       ("removed", "removed"), ("no ROCm version", "no ROCm version known"),
                       ("has no ROCm release", "no ROCm release (hipDNN)"), ("no ", "no equivalent")):
        if key in reason:
            return label
    return "other"


def account(engine, tables_dir: Path | None = None) -> list[LibraryCoverage]:
    settings = engine.settings
    by_path: dict[str, LibraryCoverage] = {}
    owners: dict[str, tuple[str, str]] = {}  # table path -> (kind, code) of the rules loading it
    for rule in engine.selected:
        if rule.kind not in ("rename", "unmapped") or not rule.tables:
            continue
        for path in resolve_tables(rule.source_path, rule.tables):
            cov = by_path.setdefault(path, LibraryCoverage(Path(path).stem))
            if rule.kind == "rename":
                cov.rename_rule = rule.code
            else:
                cov.unmapped_rule = rule.code
            owners[path] = (rule.kind, rule.code)
    data_dir = None
    for path, cov in sorted(by_path.items(), key=lambda kv: kv[1].library):
        data_dir = Path(path).parent
        for entry in load_table(path).values():
            res = resolve_for(entry, settings)
            cov.names += 1
            if res.target is None:
                cov.status["flagged"] += 1
                cov.reasons[_reason_kind(res.reason)] += 1
            elif res.target == entry.cuda:
                cov.status["same-name"] += 1
            else:
                cov.status["renamed"] += 1
    result = sorted(by_path.values(), key=lambda c: c.library)
    if tables_dir is not None and data_dir is not None:
        _check_sources(result, data_dir, tables_dir)
    return result


def _check_sources(result: list[LibraryCoverage], data_dir: Path, tables_dir: Path) -> None:
    """Every row of every reference table must be a name of the data (its own library's, or the
    library that owns a name several tables list), with the same targets."""
    from ..api.hipify_tables import LIBRARIES, parse_table, source_files

    payloads = {lib: json.loads((data_dir / f"{lib}.json").read_text(encoding="utf-8")) for lib in LIBRARIES}
    for cov in result:
        lib = cov.library
        files = source_files(lib, tables_dir) if lib in LIBRARIES else []
        rows = accounted = 0
        mine = payloads[lib]
        for name, kind in files:
            path = tables_dir / name
            if not path.is_file():
                cov.problems.append(f"reference table {name} not found in {tables_dir}")
                continue
            for row in parse_table(path):
                rows += 1
                cuda = row["cuda"]
                owner = mine["shared_with"].get(cuda, lib)
                got = payloads[owner]["names"].get(cuda)
                if got is None:
                    cov.problems.append(f"{name}: `{cuda}` is missing from the generated data")
                    continue
                # roc-only tables hold the roc* target in the first block; *_and_ROC in the second.
                want = row.get("second") if (kind == "roc" and "second" in row) else row["target"]
                have = got[13] if kind == "roc" else got[0]
                if cuda in payloads[owner]["duplicate_rows"] and (want is None or want == have):
                    accounted += 1  # a repeated row (the data keeps its mapped twin)
                    continue
                # where the data differs from the table, its note says why: a target added by hand
                # where the table has none, a project mapping, a name no header declares (the audit)
                hand = got[17].startswith("roc target hand-added" if kind == "roc" else "hand-added")
                explained = got[17].startswith("project mapping") or "header audit" in got[17]
                if want != have and not ((hand and want is None) or explained):
                    cov.problems.append(f"{name}: `{cuda}` maps to {want!r} in the table but {have!r} in the data")
                    continue
                accounted += 1
        cov.source_rows, cov.source_accounted = rows, accounted


def render_text(result: list[LibraryCoverage], settings) -> str:
    head = (f"profile {settings.library_profile}, target ROCm {settings.target_rocm}, "
            f"experimental {'on' if settings.experimental else 'off'}")
    lines = [f"CUDA -> HIP name coverage ({head})", ""]
    cols = ("library", "names", "renamed", "same-name", "flagged", "rules", "source rows", "complete")
    table = [cols]
    for c in result:
        src = "-" if c.source_rows is None else f"{c.source_accounted}/{c.source_rows}"
        table.append((c.library, str(c.names), str(c.status["renamed"]), str(c.status["same-name"]),
                      str(c.status["flagged"]), f"{c.rename_rule or '-'}/{c.unmapped_rule or '-'}", src,
                      "yes" if c.complete else "NO"))
    total = [sum(c.names for c in result)] + [sum(c.status[s] for c in result) for s in STATUSES]
    rows_total = sum(c.source_rows or 0 for c in result)
    acc_total = sum(c.source_accounted or 0 for c in result)
    table.append(("total", *map(str, total), "",
                  f"{acc_total}/{rows_total}" if rows_total else "-",
                  "yes" if all(c.complete for c in result) else "NO"))
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    for r in table:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    reasons = Counter()
    for c in result:
        reasons.update(c.reasons)
    if reasons:
        lines += ["", "flagged by HIP102, by reason: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common())]
    for c in result:
        for p in c.problems[:20]:
            lines.append(f"problem ({c.library}): {p}")
        if (c.rename_rule is None and c.names) or c.unmapped_rule is None:
            lines.append(f"problem ({c.library}): no selected {'rename' if c.rename_rule is None else 'unmapped'} "
                         "rule loads this table")
    return "\n".join(lines) + "\n"
