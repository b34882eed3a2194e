"""Reader of HIPIFY's API tables (docs/reference/tables/*.md of github.com/ROCm/HIPIFY, MIT; docs/tables
before rocm-6.4).

Used by tools/generate_rule_data.py (which turns the tables into rules/api/data/*.json) and by
`cuda2hip coverage --tables DIR` (which checks that every row of the tables is accounted for).
Each row is `|cuda|A|D|C|R|hip|A|D|C|R|E|`, in the *_and_ROC / *_MIOPEN variants followed by a
second target block (roc* / MIOpen); an empty target cell means "no equivalent".
"""

from __future__ import annotations

import re
from pathlib import Path

# library id (= data file name) -> (HIP table, table with the roc*/MIOpen block or None)
LIBRARIES = {
    "runtime": ("CUDA_Runtime_API_functions_supported_by_HIP.md", None),
    "driver": ("CUDA_Driver_API_functions_supported_by_HIP.md", None),
    "device": ("CUDA_Device_API_supported_by_HIP.md", None),
    "rtc": ("CUDA_RTC_API_supported_by_HIP.md", None),
    "complex": ("cuComplex_API_supported_by_HIP.md", None),
    "cublas": ("CUBLAS_API_supported_by_HIP.md", "CUBLAS_API_supported_by_HIP_and_ROC.md"),
    "curand": ("CURAND_API_supported_by_HIP.md", "CURAND_API_supported_by_HIP_and_ROC.md"),
    "cufft": ("CUFFT_API_supported_by_HIP.md", None),
    "cusparse": ("CUSPARSE_API_supported_by_HIP.md", "CUSPARSE_API_supported_by_HIP_and_ROC.md"),
    "cusolver": ("CUSOLVER_API_supported_by_HIP.md", "CUSOLVER_API_supported_by_HIP_and_ROC.md"),
    "cudnn": ("CUDNN_API_supported_by_HIP.md", "CUDNN_API_supported_by_HIP_and_MIOPEN.md"),
    "cub": ("CUB_API_supported_by_HIP.md", None),
    # the cuBLASLt rows of HIPIFY's cuBLAS table (hipBLASLt is a library of its own), split off by
    # tools/generate_rule_data.py
    "cublaslt": (None, None),
}

# The roc*/MIOpen-only tables repeat the second block of the *_and_ROC / *_and_MIOPEN tables.
ROC_ONLY = {
    "cublas": "CUBLAS_API_supported_by_ROC.md",
    "curand": "CURAND_API_supported_by_ROC.md",
    "cusparse": "CUSPARSE_API_supported_by_ROC.md",
    "cusolver": "CUSOLVER_API_supported_by_ROC.md",
    "cudnn": "CUDNN_API_supported_by_MIOPEN.md",
}


SECTION = re.compile(r"^##\s+\*\*\d+\.\s+(.*?)\*\*\s*$")
NAME = re.compile(r"^`([^`]*)`$")


def _cell_name(cell: str) -> str | None:
    cell = cell.strip()
    if not cell:
        return None
    m = NAME.match(cell)
    return m.group(1).strip() if m else cell


def parse_table(path: Path) -> list[dict]:
    """Rows of one HIPIFY markdown table, in order, with their section."""
    rows = []
    section = ""
    header: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = SECTION.match(line)
        if m:
            section = m.group(1).strip()
            header = None
            continue
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "**CUDA**":
            header = [c.strip("*") for c in cells]
            continue
        if header is None or not cells or set(cells[0]) <= set(":- "):
            continue
        cuda = _cell_name(cells[0])
        if not cuda:
            continue
        rec = {"cuda": cuda, "section": section,
               "cuda_added": cells[1], "cuda_deprecated": cells[2], "cuda_changed": cells[3],
               "cuda_removed": cells[4]}
        target = _cell_name(cells[5])
        rec["target"] = target
        rec["target_added"], rec["target_deprecated"], rec["target_changed"], rec["target_removed"] = cells[6:10]
        rec["target_experimental"] = cells[10] if len(cells) > 10 else ""
        if len(cells) > 11:  # second target block (ROC / MIOPEN)
            second = cells[11:17] + [""] * (17 - len(cells))
            rec["second"] = _cell_name(second[0])
            rec["second_added"], rec["second_removed"] = second[1], second[4]
            rec["second_experimental"] = second[5]
        rows.append(rec)
    return rows


def source_files(lib: str, tables: Path) -> list[tuple[str, str]]:
    """(file, "hip" | "roc") of the tables that give `lib`'s rows in `tables`. From rocm-7.0 on,
    HIPIFY has no hipDNN tables (its CHANGELOG: "hipDNN support is removed by default"): the cuDNN
    names come from the MIOpen table alone, with no HIP target."""
    hip_file, roc_file = LIBRARIES[lib]
    roc_only = ROC_ONLY.get(lib)
    if hip_file and not (tables / hip_file).is_file() and roc_only and (tables / roc_only).is_file():
        return [(roc_only, "roc")]
    return [(f, "hip") for f in (hip_file,) if f] + [(f, "roc") for f in (roc_file, roc_only) if f]


def library_rows(lib: str, tables: Path) -> tuple[list[dict], dict[str, dict], list[str]]:
    """`lib`'s rows with their HIP target, the roc*/MIOpen block of each by CUDA name (the
    `second*` keys), and the tables read."""
    hip_file, roc_file = LIBRARIES[lib]
    files = source_files(lib, tables)
    if hip_file and files == [(ROC_ONLY.get(lib), "roc")]:  # no HIP table: the roc one, no HIP target
        rows = parse_table(tables / files[0][0])
        roc = {r["cuda"]: {"second": r["target"], "second_added": r["target_added"],
                           "second_removed": r["target_removed"], "second_experimental": r["target_experimental"]}
               for r in rows}
        empty = dict.fromkeys(("target_added", "target_deprecated", "target_changed", "target_removed",
                               "target_experimental"), "")
        return [{**r, **empty, "target": None} for r in rows], roc, [files[0][0]]
    hip_rows = parse_table(tables / hip_file) if hip_file else []
    roc = {r["cuda"]: r for r in parse_table(tables / roc_file)} if roc_file else {}
    return hip_rows, roc, [f for f in (hip_file, roc_file) if f]
