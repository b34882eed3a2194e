#!/usr/bin/env python3
"""Audit every HIP/ROCm name the rules write against the real headers of the ROCm releases Debian
packages (fetched by tests/harness/fetch_rocm_release_headers.py), and compile each of them at
every release cuda2hip targets (cuda2hip/rocm_releases.py).

  --write   parse the fetched headers (clang), record in tools/data/rocm-headers.json in which
            release each target name, header, library and CMake name is declared, regenerate the
            name tables (tools/generate_rule_data.py applies the corrections) and the report in
            docs/api-coverage.md.
  --probe   (with --write) also compile a probe of every name at each target release
            (tools/rocm_headers/probe_audit.py) with that release's compiler (--compiler R=CMD,
            CUDA2HIP_HIPCC_R_R, tests/harness/hip_toolchains.py; Debian 12's hipcc for 5.2), record
            the results in tools/data/rocm-probes.json, let them correct the tables too, and write
            the figures to docs/audit.md. `--release R` probes only R (the others' committed
            results stay). Without --write: probe, print the figures, write nothing.
  --check   (CI) fail when the rules write a name no checked header declares, or one whose compile
            probe failed at a release the data writes it for, when the committed facts disagree
            with the headers of the same package versions, or when a report is stale. Releases
            that could not be fetched, or whose suite moved to other versions, are reported and
            skipped: the committed facts stand for them.

Usage: python tools/audit_rule_data.py [--headers DIR] [--tables DIR] (--write [--probe] | --probe | --check)
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
from rocm_headers import compilers, probe_audit, probe_report, report  # noqa: E402
from rocm_headers.corrections import FACTS, PROBE_FACTS, load_facts  # noqa: E402
from rocm_headers.facts import collect, render  # noqa: E402
from rocm_headers.problems import problems  # noqa: E402
from rocm_headers.releases import load  # noqa: E402
from rocm_headers.targets import (build_targets, fix_targets, include_targets, inline_targets,  # noqa: E402
                                  kept_headers, table_targets)

from cuda2hip import rocm_releases  # noqa: E402

DEFAULT_HEADERS = ROOT / ".cache" / "rocm-release-headers"
DOCS = ROOT / "docs" / "api-coverage.md"
AUDIT_DOCS = ROOT / "docs" / "audit.md"


def committed_tables() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(generate_rule_data.DEFAULT_OUT.glob("*.json"))}


def all_targets(tables: dict[str, dict]):
    return table_targets(tables) + inline_targets() + include_targets()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def probe(tables_dir: Path | None, releases: list[str], given: dict[str, str], facts: dict, jobs: int) -> dict:
    """Compile the probes at `releases`; the probe facts (the committed ones, with those releases
    replaced), with the figures when HIPIFY's tables (`tables_dir`) are there."""
    header_facts = {k: v for k, v in facts.items() if k != "probes"}
    # the names to probe: what the tables write once the header facts (not the probes) corrected them
    tables = generate_rule_data.build_all(tables_dir, header_facts) if tables_dir else committed_tables()
    inline, fixed = inline_targets(), fix_targets()
    includes = sorted({t.name for t in include_targets() + kept_headers()})
    try:
        from rocm_headers import probe_calls

        decls, macros = probe_calls.cuda_declarations()
    except Exception as exc:  # no CUDA headers here: the functions are probed by name
        log(f"no call probes (CUDA's declarations could not be read: {exc})")
        decls, macros = {}, {}
    fresh = {}
    for release in releases:
        compiler = compilers.find(release, given)
        if compiler is None:
            log(compilers.how_to_get(release) + ": its committed results stay")
            continue
        fresh[release] = probe_audit.run_release(release, compiler, tables, inline, fixed, includes, header_facts,
                                                 decls, macros, log, jobs)
    source = ("compile probes of every name the rules write (tools/rocm_headers/probe_audit.py), one result per "
              "target release: [form, first error or \"\"]; written by tools/audit_rule_data.py --probe --write")
    out = probe_audit.merge(facts.get("probes") or probe_audit.load(), fresh, source)
    out.pop("figures", None)
    return out


def write_probes(probe_facts: dict, tables_dir: Path | None) -> None:
    if tables_dir is not None:
        hipify = generate_rule_data.build_all(tables_dir)
        extra = probe_report.extra_labels(inline_targets(), fix_targets(), include_targets(), committed_tables(),
                                          kept_headers())
        probe_facts["figures"] = probe_report.figures(hipify, committed_tables(), probe_facts, extra)
    elif "figures" in probe_audit.load():
        probe_facts["figures"] = probe_audit.load()["figures"]
    PROBE_FACTS.write_text(probe_audit.render(probe_facts), encoding="utf-8")
    text = AUDIT_DOCS.read_text(encoding="utf-8")
    AUDIT_DOCS.write_text(report.replace_section(text, probe_report.section(probe_facts), probe_report.BEGIN,
                                                 probe_report.END), encoding="utf-8")


def probe_problems(probe_facts: dict, tables: dict[str, dict], releases=None, docs: bool = True) -> list[str]:
    """Names written at a release whose probe failed (or is missing) there, and a stale docs/audit.md."""
    out = []
    if not probe_facts:
        return [f"{PROBE_FACTS.relative_to(ROOT)} is missing: run tools/audit_rule_data.py --probe --write"]
    extra = probe_report.extra_labels(inline_targets(), fix_targets(), include_targets(), tables)
    for release in releases or probe_facts["releases"]:
        for (lib, name), (cuda, _note) in probe_report.written(tables, release).items():
            got = probe_facts["names"].get(name, {}).get(release)
            if got is None:
                out.append(f"`{name}` ({lib}, for `{cuda}`) is written at ROCm {release} but was not probed there: "
                           "run tools/audit_rule_data.py --probe --write")
            elif got[1]:
                out.append(f"`{name}` ({lib}, for `{cuda}`) is written at ROCm {release} but does not compile there: "
                           f"{got[1]}")
        for name, _label in probe_report.extra_written(extra, release):
            got = probe_facts["names"].get(name, {}).get(release)
            if got is not None and got[1]:
                out.append(f"`{name}` (written by a rule) does not compile at ROCm {release}: {got[1]}")
    text = AUDIT_DOCS.read_text(encoding="utf-8") if AUDIT_DOCS.is_file() else ""
    if docs and report.replace_section(text, probe_report.section(probe_facts), probe_report.BEGIN, probe_report.END) != text:
        out.append(f"{AUDIT_DOCS.relative_to(ROOT)}: the compile audit section is stale (run --probe --write)")
    return out


def write(headers: Path, tables_dir: Path, probe_releases: list[str] | None = None, given=None, jobs: int = 2) -> int:
    suites, manifest = load(headers)
    hipify = generate_rule_data.build_all(tables_dir)  # uncorrected: every name HIPIFY gives
    facts = collect(suites, manifest, all_targets(hipify) + fix_targets(), build_targets())
    FACTS.parent.mkdir(parents=True, exist_ok=True)
    FACTS.write_text(render(facts), encoding="utf-8")
    if probe_releases:
        probe_facts = probe(tables_dir, probe_releases, given or {}, facts, jobs)
        PROBE_FACTS.write_text(probe_audit.render(probe_facts), encoding="utf-8")
    else:  # the committed probe results, their figures recomputed for the new tables
        probe_facts = probe_audit.load()
    status = generate_rule_data.main(["--tables", str(tables_dir)])
    if status:
        return status
    if probe_facts:
        write_probes(probe_facts, tables_dir)
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
    found += probe_problems(facts.get("probes") or {}, tables)
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
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--probe", action="store_true", help="compile a probe of every name at each target release")
    ap.add_argument("--release", action="append", choices=rocm_releases.AUDITED,
                    help="probe only this release (repeatable; default: every target release)")
    ap.add_argument("--compiler", action="append", default=[], metavar="RELEASE=CMD",
                    help="the compiler command of a release (default: see tools/rocm_headers/compilers.py)")
    ap.add_argument("--jobs", type=int, default=2, help="compilers run at once (default 2)")
    args = ap.parse_args(argv)
    if args.check == (args.write or args.probe):
        ap.error("give --check, or --write and/or --probe")
    given = dict(c.split("=", 1) for c in args.compiler if "=" in c)
    releases = args.release or list(rocm_releases.AUDITED)
    if args.write:
        if not (args.headers / "manifest.json").is_file():
            print(f"no fetched headers in {args.headers}", file=sys.stderr)
            return 2
        return write(args.headers, args.tables, releases if args.probe else None, given, args.jobs)
    if args.probe:  # probe and tell, write nothing
        facts = load_facts()
        tables_dir = args.tables if args.tables.is_dir() else None
        probe_facts = probe(tables_dir, releases, given, facts, args.jobs)
        done = [r for r in releases if r in probe_facts["releases"]]
        bad = probe_problems(probe_facts, committed_tables(), done, docs=False)
        for p in bad:
            print("problem:", p, file=sys.stderr)
        return 1 if any("does not compile" in p for p in bad) else 0
    return check(args.headers)


if __name__ == "__main__":
    sys.exit(main())
