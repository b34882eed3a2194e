#!/usr/bin/env python3
"""Audit every HIP/ROCm name the rules write against the real headers of the ROCm releases Debian
packages (fetched by tests/harness/fetch_rocm_release_headers.py).

  --write   parse the fetched headers (clang), record in tools/data/rocm-headers.json in which
            release each target name, header, library and CMake name is declared, regenerate the
            name tables (tools/generate_rule_data.py applies the corrections) and the report in
            docs/api-coverage.md.
  --check   (CI) fail when the rules write a name no checked header declares, when the committed
            facts disagree with the headers of the same package versions, or when the report is
            stale. Releases that could not be fetched, or whose suite moved to other versions, are
            reported and skipped: the committed facts stand for them.

Usage: python tools/audit_rule_data.py [--headers DIR] [--tables DIR] (--write | --check)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import generate_rule_data  # noqa: E402
from rocm_headers import report  # noqa: E402
from rocm_headers.corrections import FACTS, load_facts  # noqa: E402
from rocm_headers.facts import collect, render  # noqa: E402
from rocm_headers.problems import problems  # noqa: E402
from rocm_headers.releases import load  # noqa: E402
from rocm_headers.targets import build_targets, include_targets, inline_targets, table_targets  # noqa: E402

DEFAULT_HEADERS = ROOT / ".cache" / "rocm-release-headers"
DOCS = ROOT / "docs" / "api-coverage.md"


def committed_tables() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(generate_rule_data.DEFAULT_OUT.glob("*.json"))}


def all_targets(tables: dict[str, dict]):
    return table_targets(tables) + inline_targets() + include_targets()


def write(headers: Path, tables_dir: Path) -> int:
    suites, manifest = load(headers)
    hipify = generate_rule_data.build_all(tables_dir)  # uncorrected: every name HIPIFY gives
    facts = collect(suites, manifest, all_targets(hipify), build_targets())
    FACTS.parent.mkdir(parents=True, exist_ok=True)
    FACTS.write_text(render(facts), encoding="utf-8")
    status = generate_rule_data.main(["--tables", str(tables_dir)])
    if status:
        return status
    DOCS.write_text(report.replace_section(DOCS.read_text(encoding="utf-8"), report.section(facts, committed_tables())),
                    encoding="utf-8")
    found = problems(facts, all_targets(committed_tables()), build_targets())
    print(report.summary(facts, committed_tables()))
    for p in found:
        print("problem:", p, file=sys.stderr)
    return 1 if found else 0


def check(headers: Path) -> int:
    facts = load_facts()
    if not facts:
        print(f"{FACTS} is missing: run tools/audit_rule_data.py --write", file=sys.stderr)
        return 1
    tables = committed_tables()
    found = problems(facts, all_targets(tables), build_targets())
    notes = []
    if (headers / "manifest.json").is_file():
        suites, manifest = load(headers)
        fresh = collect(suites, manifest, all_targets(tables), build_targets())
        found += report.stale(facts, fresh, notes)
    else:
        notes.append(f"no fetched headers in {headers}: checked the committed facts only "
                     "(tests/harness/fetch_rocm_release_headers.py fetches them)")
    text = DOCS.read_text(encoding="utf-8")
    if report.replace_section(text, report.section(facts, tables)) != text:
        found.append(f"{DOCS.relative_to(ROOT)}: the header audit section is stale (run --write)")
    print(report.summary(facts, tables))
    for n in notes:
        print("note:", n)
    for p in found:
        print("problem:", p, file=sys.stderr)
    return 1 if found else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--headers", type=Path, default=DEFAULT_HEADERS)
    ap.add_argument("--tables", type=Path, default=generate_rule_data.DEFAULT_TABLES)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    if args.write:
        if not (args.headers / "manifest.json").is_file():
            print(f"no fetched headers in {args.headers}", file=sys.stderr)
            return 2
        return write(args.headers, args.tables)
    return check(args.headers)


if __name__ == "__main__":
    sys.exit(main())
