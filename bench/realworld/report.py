"""Tables of a harness run (terminal and Markdown; one per release, and all releases side by side)
and the run's JSON record: {label, tool_rev, date, seconds, releases: {R: {toolchain, codebases}}}."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .harness import CodebaseResult, Failure

COLUMNS = ("code base", "units", "nvcc-valid", "compile", "predicted", "silent", "2nd fix changes", "fix time")
# Where a code base ships its own HIP port: how many nvcc-valid units the port compiles, and how
# many of those (the fair set) cuda2hip's output compiles.
PORT_COLUMNS = ("human port", "cuda2hip on fair set")


def _has_port(results: list[CodebaseResult]) -> bool:
    return any(r.human_port for r in results)


def port_cells(results: list[CodebaseResult]) -> list[str]:
    """The human port's compile rate over the nvcc-valid units, and cuda2hip's over the fair set
    (the units the port compiles), summed over `results`; blank without a port."""
    ported = [r for r in results if r.human_port]
    if not ported:
        return ["", ""]
    fair = sum(len(r.human_compiled) for r in ported)
    return [_rate(fair, sum(r.nvcc_valid for r in ported)), _rate(sum(r.fair_compiled for r in ported), fair)]


def _columns(results: list[CodebaseResult]) -> tuple[str, ...]:
    return COLUMNS + PORT_COLUMNS if _has_port(results) else COLUMNS


def rows(results: list[CodebaseResult]) -> list[list[str]]:
    out = []
    totals = [0] * 6
    port = _has_port(results)
    for r in results:
        values = [r.units, r.nvcc_valid, r.compiled, r.predicted, r.silent, len(r.refix_changed)]
        totals = [t + v for t, v in zip(totals, values)]
        out.append([r.name, *map(str, values[:2]), _rate(r.compiled, r.nvcc_valid), *map(str, values[3:]),
                    f"{r.fix_seconds:.1f} s", *(port_cells([r]) if port else [])])
    if len(results) > 1:
        out.append(["**all**", *map(str, totals[:2]), _rate(totals[2], totals[1]), *map(str, totals[3:]),
                    f"{sum(r.fix_seconds for r in results):.1f} s", *(port_cells(results) if port else [])])
    return out


def _rate(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.0f}%)" if of else "0"


def markdown_table(results: list[CodebaseResult]) -> str:
    columns = _columns(results)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(results)]
    return "\n".join(lines)


def text_table(results: list[CodebaseResult]) -> str:
    columns = _columns(results)
    table = [list(columns), *[[c.replace("**", "") for c in row] for row in rows(results)]]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in table)


def silent_list(results: list[CodebaseResult]) -> list[str]:
    return [f"{r.name}: {f.unit}: {f.first_error}" for r in results for f in r.failures if f.silent]


def combined_table(by_release: dict[str, list[CodebaseResult]]) -> str:
    """Markdown: per code base its units, nvcc-valid units, and at each release (in the order
    given) compile / predicted / silent, and, where any code base has its own HIP port, the
    port's rate and cuda2hip's on the fair set."""
    releases = list(by_release)
    at = {(r, c.name): c for r, results in by_release.items() for c in results}
    names = list(dict.fromkeys(name for _r, name in at))
    port = {r: _has_port(by_release[r]) for r in releases}
    head = ["code base", "units", "nvcc-valid",
            *[f"{r}: {c}" for r in releases
              for c in ("compile", "predicted", "silent", *(PORT_COLUMNS if port[r] else ()))]]

    def row(label: str, groups: dict[str, list[CodebaseResult]], firsts: list[CodebaseResult]) -> list[str]:
        cells = [label, str(sum(c.units for c in firsts)), str(sum(c.nvcc_valid for c in firsts))]
        for r in releases:
            cs = groups[r]
            cells += [_rate(sum(c.compiled for c in cs), sum(c.nvcc_valid for c in cs)),
                      str(sum(c.predicted for c in cs)), str(sum(c.silent for c in cs))] if cs else ["", "", ""]
            if port[r]:
                cells += port_cells(cs)
        return cells

    firsts = {n: next(at[r, n] for r in releases if (r, n) in at) for n in names}
    rows_ = [row(n, {r: [at[r, n]] if (r, n) in at else [] for r in releases}, [firsts[n]]) for n in names]
    if len(names) > 1:
        rows_.append(row("**all**", {r: [at[r, n] for n in names if (r, n) in at] for r in releases},
                         list(firsts.values())))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows_])


def to_json(label: str, meta: dict, by_release: dict[str, list[CodebaseResult]], toolchains: dict[str, dict]) -> dict:
    out = {"label": label, **meta, "releases": {}}
    for release, results in by_release.items():
        records = []
        for r in results:
            record = asdict(r)
            record.update(predicted=r.predicted, silent=r.silent, fair_compiled=r.fair_compiled)
            records.append(record)
        out["releases"][release] = {"toolchain": toolchains[release], "codebases": records}
    return out


def from_json(data: dict) -> dict[str, list[CodebaseResult]]:
    """{release: results}; a record of the single-release harness (before 7.2 and 6.4 were added)
    is its `target_rocm`'s."""
    if "releases" in data:
        sections = {r: v["codebases"] for r, v in data["releases"].items()}
    else:
        sections = {data.get("target_rocm", "5.2"): data["codebases"]}
    out = {}
    for release, records in sections.items():
        results = []
        for record in records:
            record = dict(record)
            for derived in ("predicted", "silent", "fair_compiled"):
                record.pop(derived, None)
            record.setdefault("release", release)
            record["failures"] = [Failure(**f) for f in record["failures"]]
            results.append(CodebaseResult(**record))
        out[release] = results
    return out


def save(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)
