#!/usr/bin/env python3
"""Generate cuda2hip's CUDA -> HIP name tables (rules/api/data/*.json) from HIPIFY's
documentation tables (github.com/ROCm/HIPIFY, MIT): by default those of the release that
tests/harness/fetch_hipify_tables.py fetches into .cache/hipify-tables (from Debian's hipify source
package); --tables DIR reads another folder of them.

Each input row `|cuda|A|D|C|R|hip|A|D|C|R|E|` (and, in the *_and_ROC / *_MIOPEN variants, a second
target block) becomes one compact row of the output, keyed by the CUDA name; an empty HIP column
is kept as null ("no HIP equivalent"), so every row of the tables is accounted for.

Usage: python tools/generate_rule_data.py [--tables DIR] [--out DIR] [--check]
  --check   exit 1 if the committed data differs from what the tables give (used by the tests).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cuda2hip.api.hipify_tables import LIBRARIES, library_rows  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from rocm_headers.corrections import FACTS, apply, load_facts  # noqa: E402

DEFAULT_TABLES = ROOT / ".cache" / "hipify-tables"
FETCH_TABLES = "python tests/harness/fetch_hipify_tables.py .cache/hipify-tables"
DEFAULT_OUT = ROOT / "rules" / "api" / "data"

COLUMNS = [
    "hip", "kind", "library", "section",
    "cuda_added", "cuda_deprecated", "cuda_changed", "cuda_removed",
    "hip_added", "hip_deprecated", "hip_changed", "hip_removed", "experimental",
    "roc", "roc_added", "roc_removed", "roc_experimental", "note",
]

# Names the tables list under several libraries (e.g. `CUstream_st` in the driver and the
# runtime table) belong to the first library in this order, so that one identifier gets one
# finding and one edit; the others record it under "shared_with" (counted by the coverage).
PRECEDENCE = ["runtime", "driver", "device", "rtc", "complex", "cublas", "cublaslt", "curand", "cufft",
              "cusparse", "cusolver", "cudnn", "cub"]

# Names added by hand: the tables stop at ROCm 6.3 / CUDA 12.6 (see the tables' README). Only
# what a primary source states, and each must be declared by a ROCm header (tools/audit_rule_data.py
# fails otherwise). (library, cuda, hip, section, cuda_added, hip_added, source)
WARP_SYNC = ("ROCm/clr hipamd/include/hip/amd_detail/amd_warp_sync_functions.h declares the _sync shuffles "
             "from ROCm 6.2 behind -DHIP_ENABLE_WARP_SYNC_BUILTINS, with a 64-bit mask; declared by default "
             "from ROCm 7.0: https://rocm.docs.amd.com/projects/HIP/en/latest/hip-7-changes.html")
HAND_ADDED = [
    ("device", name, name, "Device Functions", "", "7.0.0", WARP_SYNC)
    for name in ("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")
]

# roc targets the tables lack, from the headers: (library, cuda, roc, version source, source).
# The version is that of the same row's hipRAND name: on ROCm, hipRAND's state *is* the rocRAND one.
_XORWOW = ("hipRAND's hiprand/hiprand_kernel_hcc.h: `DEFINE_HIPRAND_STATE(hiprandState, rocrand_state_xorwow)` and "
           "`DEFINE_HIPRAND_STATE(hiprandStateXORWOW, rocrand_state_xorwow)`; rocRAND's rocrand/rocrand_xorwow.h: "
           "`typedef rocrand_device::xorwow_engine rocrand_state_xorwow;` (cuRAND's curand_kernel.h: "
           "`typedef struct curandStateXORWOW curandState_t;`)")
ROC_HAND_ADDED = [
    ("curand", name, "rocrand_state_xorwow", "hip_added", _XORWOW)
    for name in ("curandState", "curandState_t", "curandStateXORWOW", "curandStateXORWOW_t")
]

MAPPINGS = ROOT / "tools" / "data" / "mappings.yaml"
# cuBLASLt names (HIPIFY lists them in its cuBLAS table): hipBLASLt's library of their own
CUBLASLT = re.compile(r"(?:cublasLt|CUBLASLT_)")


def project_mappings(path: Path = MAPPINGS) -> dict[str, dict[str, tuple[str, str]]]:
    """library -> CUDA name -> (HIP name, why) of tools/data/mappings.yaml."""
    import yaml

    out: dict[str, dict[str, tuple[str, str]]] = {}
    for block in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
        for cuda, hip in block["names"].items():
            out.setdefault(block["library"], {})[cuda] = (hip, block["why"])
    return out


def _mapped(row: list, hip: str, why: str) -> list:
    """A row whose HIP target is the project's: no HIPIFY version stands (the header audit gives it)."""
    row = list(row)
    old = row[0]
    row[0] = hip
    row[8:13] = ["", "", "", "", False]
    row[17] = f"project mapping (tools/data/mappings.yaml): {why}; HIPIFY: {old or 'no equivalent'}"
    return row


def _kind(name: str, section: str) -> str:
    """function / define / datatype (types, enumerators and constants share the data-type
    sections of the tables and cannot be told apart by name alone)."""
    if "types" in section.lower():
        return "define" if re.fullmatch(r"_*[A-Z][A-Z0-9_]*", name) else "datatype"
    return "function"


def _row(r: dict, lib: str, roc: dict | None) -> list:
    return [
        r["target"], _kind(r["cuda"], r["section"]), lib, r["section"],
        r["cuda_added"], r["cuda_deprecated"], r["cuda_changed"], r["cuda_removed"],
        r["target_added"], r["target_deprecated"], r["target_changed"], r["target_removed"],
        bool(r["target_experimental"].strip()),
        roc.get("second") if roc else None,
        roc.get("second_added", "") if roc else "",
        roc.get("second_removed", "") if roc else "",
        bool(roc.get("second_experimental", "").strip()) if roc else False,
        "",
    ]


def tables_origin(tables: Path, files: list[str]) -> str:
    """Where the rows come from: the release and package the fetched tables' manifest names."""
    manifest = tables / "manifest.json"
    if not manifest.is_file():  # a folder of HIPIFY's docs/tables given with --tables
        return "HIPIFY docs/tables/" + " + ".join(files) + " (github.com/ROCm/HIPIFY, MIT)"
    info = json.loads(manifest.read_text(encoding="utf-8"))
    return (f"HIPIFY {info['release']} docs/reference/tables/" + " + ".join(files)
            + f" (github.com/ROCm/HIPIFY, MIT; Debian source package {info['source_package']})")


def tables_release(tables: Path) -> str | None:
    """The HIPIFY release of a folder of tables (its manifest's), None if it names none."""
    manifest = tables / "manifest.json"
    return json.loads(manifest.read_text(encoding="utf-8")).get("release") if manifest.is_file() else None


def data_release(out: Path = DEFAULT_OUT) -> str | None:
    """The HIPIFY release the data in `out` was generated from, as its `source` names it. Data
    generated before the project fetched its tables names none: that was rocm-6.3.0's."""
    source = json.loads((out / "runtime.json").read_text(encoding="utf-8"))["source"]
    m = re.match(r"HIPIFY (rocm-[\d.]+) ", source)
    return m.group(1) if m else "rocm-6.3.0" if source.startswith("HIPIFY docs/tables/") else None


def build_library(lib: str, tables: Path) -> dict:
    """One library's names (before cross-library ownership is settled)."""
    hip_rows, roc, sources = library_rows(lib, tables)
    names: dict[str, list] = {}
    duplicates: dict[str, int] = {}
    for r in hip_rows:
        row = _row(r, lib, roc.get(r["cuda"]))
        if r["cuda"] in names:
            duplicates[r["cuda"]] = duplicates.get(r["cuda"], 0) + 1
            # The tables list a few names twice (e.g. in a section and its [DEPRECATED] twin);
            # keep the row that has a HIP target.
            if names[r["cuda"]][0] is not None:
                continue
        names[r["cuda"]] = row
    hand = []
    for h_lib, cuda, hip, section, cuda_added, hip_added, source in HAND_ADDED:
        if h_lib != lib:
            continue
        old = names.get(cuda)
        if old is not None and old[0] is not None:
            raise SystemExit(f"hand-added {cuda} is already mapped by the tables to {old[0]}: drop it")
        row = [hip, _kind(cuda, section), lib, section, cuda_added, "", "", "", hip_added, "", "", "", False,
               None, "", "", False, f"hand-added: {source}"]
        if old is not None:  # keep what the tables say about the CUDA side
            row[4:8] = old[4:8]
        names[cuda] = row
        hand.append(cuda)
    for h_lib, cuda, roc, version_from, source in ROC_HAND_ADDED:
        row = names.get(cuda) if h_lib == lib else None
        if row is None:
            continue
        if row[13] is not None:
            raise SystemExit(f"hand-added roc target of {cuda} is already in the tables ({row[13]}): drop it")
        row[13], row[14] = roc, row[COLUMNS.index(version_from)]
        row[17] = f"roc target hand-added: {source}"
        hand.append(cuda)
    mappings = project_mappings().get(lib, {})
    for cuda, (hip, why) in mappings.items():
        if cuda in names:
            names[cuda] = _mapped(names[cuda], hip, why)
    for cuda, (hip, why) in mappings.items():
        if cuda not in names:  # a CUDA name HIPIFY's table lacks (cuda_bf16.h's nv_bfloat16 typedef)
            kind = next((r[1] for r in names.values() if r[0] == hip), "function")
            row = [None, kind, lib, "project mapping", "", "", "", "", "", "", "", "", False, None, "", "", False, ""]
            names[cuda] = _mapped(row, hip, why)
            hand.append(cuda)
    return {
        "source": (tables_origin(tables, sources) if sources else "no HIPIFY table")
                  + "; generated by tools/generate_rule_data.py",
        "rows_in_source": len(hip_rows),
        "duplicate_rows": duplicates,
        "hand_added": hand,
        "shared_with": {},
        "columns": COLUMNS,
        "names": names,
    }


def _roc_versions(payloads: dict[str, dict]) -> None:
    """A roc target without a version gets the one the tables give the same roc name elsewhere:
    rocSOLVER uses rocBLAS's handle, so `cusolverDnCreate` -> `rocblas_create_handle` takes the
    version of `cublasCreate` -> `rocblas_create_handle`."""
    known: dict[str, str] = {}
    for payload in payloads.values():
        for row in payload["names"].values():
            if row[13] and row[14]:
                known.setdefault(row[13], row[14])
    for payload in payloads.values():
        for row in payload["names"].values():
            if row[13] and not row[14] and row[13] in known:
                row[14] = known[row[13]]


def build_all(tables: Path, facts: dict | None = None) -> dict[str, dict]:
    """Every library, with names listed by several tables kept only by the first library of
    PRECEDENCE (the others note the owner in `shared_with`)."""
    payloads = {lib: build_library(lib, tables) for lib in LIBRARIES}
    _roc_versions(payloads)
    blas, lt = payloads["cublas"], payloads["cublaslt"]
    for name in [n for n in blas["names"] if CUBLASLT.match(n)]:
        row = blas["names"].pop(name)
        row[2] = "cublaslt"
        lt["names"][name] = row
        blas["shared_with"][name] = "cublaslt"
    lt["source"] = "the cuBLASLt rows of " + blas["source"]
    if facts:  # the ROCm versions, corrected by the headers (tools/rocm_headers/corrections.py)
        for lib, payload in payloads.items():
            corrected = 0
            for cuda, row in payload["names"].items():
                fixed = apply(row, lib, facts)
                corrected += fixed != row
                payload["names"][cuda] = fixed
            payload["source"] += ("; ROCm versions checked against the headers of Debian's ROCm packages "
                                  "(tools/data/rocm-headers.json, tools/audit_rule_data.py): "
                                  f"{corrected} rows corrected, each saying why in its note")
    owner: dict[str, str] = {}
    for lib in PRECEDENCE:
        names = payloads[lib]["names"]
        for name in list(names):
            first = owner.setdefault(name, lib)
            if first != lib:
                mine, theirs = names.pop(name), payloads[first]["names"][name]
                if (mine[0] is not None) != (theirs[0] is not None) or (mine[0] and mine[0] != theirs[0]):
                    raise SystemExit(f"{name}: {first} and {lib} disagree ({theirs[0]} / {mine[0]})")
                payloads[lib]["shared_with"][name] = first
    return payloads


def render(payload: dict) -> str:
    # One name per line keeps diffs of regenerated data readable.
    head = {k: v for k, v in payload.items() if k != "names"}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines.append('  "names": {')
    items = list(payload["names"].items())
    for i, (name, row) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(row, ensure_ascii=False)}{sep}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=Path, default=DEFAULT_TABLES)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--facts", type=Path, default=FACTS, help="header facts (tools/audit_rule_data.py --write)")
    args = ap.parse_args(argv)
    if not args.tables.is_dir():
        hint = f"fetch them: {FETCH_TABLES}" if args.tables == DEFAULT_TABLES else "give --tables DIR"
        print(f"HIPIFY's tables not found in {args.tables} ({hint})", file=sys.stderr)
        return 2
    if args.check and tables_release(args.tables) and data_release(args.out) != tables_release(args.tables):
        print(f"{args.out} was generated from the tables of HIPIFY {data_release(args.out)}, {args.tables} holds "
              f"{tables_release(args.tables)}'s: regenerate (python tools/generate_rule_data.py)", file=sys.stderr)
        return 1
    stale = []
    for lib, payload in build_all(args.tables, load_facts(args.facts)).items():
        text = render(payload)
        out = args.out / f"{lib}.json"
        if args.check:
            if not out.is_file() or out.read_text(encoding="utf-8") != text:
                stale.append(str(out))
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if stale:
        print("stale generated data (run tools/generate_rule_data.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
