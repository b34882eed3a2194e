"""Tables of a harness run (terminal and Markdown) and the run's JSON record."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .harness import CodebaseResult, Failure

COLUMNS = ("code base", "units", "nvcc-valid", "compile", "predicted", "silent", "2nd fix changes", "fix time")


def rows(results: list[CodebaseResult]) -> list[list[str]]:
    out = []
    totals = [0] * 6
    for r in results:
        values = [r.units, r.nvcc_valid, r.compiled, r.predicted, r.silent, len(r.refix_changed)]
        totals = [t + v for t, v in zip(totals, values)]
        out.append([r.name, *map(str, values[:2]), _rate(r.compiled, r.nvcc_valid), *map(str, values[3:]),
                    f"{r.fix_seconds:.1f} s"])
    if len(results) > 1:
        out.append(["**all**", *map(str, totals[:2]), _rate(totals[2], totals[1]), *map(str, totals[3:]),
                    f"{sum(r.fix_seconds for r in results):.1f} s"])
    return out


def _rate(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.0f}%)" if of else "0"


def markdown_table(results: list[CodebaseResult]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(results)]
    return "\n".join(lines)


def text_table(results: list[CodebaseResult]) -> str:
    table = [list(COLUMNS), *[[c.replace("**", "") for c in row] for row in rows(results)]]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in table)


def silent_list(results: list[CodebaseResult]) -> list[str]:
    return [f"{r.name}: {f.unit}: {f.first_error}" for r in results for f in r.failures if f.silent]


def to_json(label: str, meta: dict, results: list[CodebaseResult]) -> dict:
    out = {"label": label, **meta, "codebases": []}
    for r in results:
        record = asdict(r)
        record.update(predicted=r.predicted, silent=r.silent)
        out["codebases"].append(record)
    return out


def from_json(data: dict) -> list[CodebaseResult]:
    results = []
    for record in data["codebases"]:
        record = dict(record)
        record.pop("predicted", None)
        record.pop("silent", None)
        record["failures"] = [Failure(**f) for f in record["failures"]]
        results.append(CodebaseResult(**record))
    return results


def save(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)
