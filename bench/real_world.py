"""The real-world yardstick: after `cuda2hip fix`, does real CUDA code build with hipcc, and
where it does not, did cuda2hip say why at the failing line?

    python bench/real_world.py                     # whole corpus, the cuda2hip of this checkout
    python bench/real_world.py --codebase cupy     # one code base (repeatable)
    python bench/real_world.py --reduced           # the few units the test suite runs
    python bench/real_world.py --fetch-only        # download the pinned sources
    python bench/real_world.py --fetch-only --reduced   # only those the test suite needs (.ci/run)
    python bench/real_world.py --tool-src DIR --label before   # another checkout of cuda2hip
    python bench/real_world.py --write-docs --compare before   # table into docs/real-world.md, docs/benchmarks.md and README.md
    python bench/real_world.py --combine a,b --write-docs      # tables of earlier runs, joined (runs nothing)

The pinned sources (bench/realworld/corpus.toml) are downloaded on first use into
.cache/real-world (never into the repository). nvcc decides which translation units are CUDA as
they are; only those count. Compiler results are cached by content, so a re-run after a change
recompiles only the units whose files changed. Exit status: 0 no silent failure and a second fix
changes nothing, 1 otherwise, 2 set-up error.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from realworld import config, fetch, harness, report  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "harness"))
import fetch_cuda_library_headers  # noqa: E402
import hip_toolchains  # noqa: E402

# Resolved: checkouts whose .cache is a symlink to one shared folder must agree on its paths.
CACHE = Path(os.environ.get("CUDA2HIP_REAL_WORLD_CACHE", ROOT / ".cache" / "real-world")).resolve()
CUDA_LIBRARY_INCLUDE = ROOT / ".cache" / "cuda-library-headers" / "include"
# HIP 5.2's: the ROCm libraries Debian 12 lacks (7.2 and 6.4 have theirs in their own trees)
ROCM_LIBRARY_INCLUDE = hip_toolchains.ROCM_LIBRARY_INCLUDE
DOC = ROOT / "docs" / "real-world.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"  # the short table, with the speed figures
README = ROOT / "README.md"  # the same short table, where users look first
BEGIN, END = "<!-- real-world table: begin -->", "<!-- real-world table: end -->"


def _git(tool_src: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(tool_src), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _replace_between(text: str, block: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"markers {BEGIN} ... {END} not found")
    return pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text)


# The library headers the compilers need, fetched on first use by the project's own scripts (the
# ones the tests use), so that one command runs the harness from a fresh clone.
# (include folder, is it complete?, the command that fetches it)
CUDA_FETCH = (CUDA_LIBRARY_INCLUDE, lambda: fetch_cuda_library_headers.up_to_date(CUDA_LIBRARY_INCLUDE.parent),
              [sys.executable, "tests/harness/fetch_cuda_library_headers.py", ".cache/cuda-library-headers"])
ROCM_FETCH = (ROCM_LIBRARY_INCLUDE, ROCM_LIBRARY_INCLUDE.is_dir,
              ["bash", "tests/harness/fetch_rocm_library_headers.sh", ".cache/rocm-library-headers"])


def _fetch_library_headers(fetches) -> bool:
    for include, complete, command in fetches:
        if complete():
            continue
        print("real_world: fetching library headers:", " ".join(command), file=sys.stderr)
        if subprocess.run(command, cwd=ROOT).returncode != 0 or not include.is_dir():
            print(f"real_world: could not fetch {include}; run by hand: {' '.join(command)}", file=sys.stderr)
            return False
    return True


def _toolchains(asked: str | None) -> dict[str, hip_toolchains.Toolchain] | None:
    """The toolchain of each release asked for (default: every release, skipping absent ones with
    a warning); a modern one missing is fetched first. None: a set-up error (printed)."""
    releases = [r.strip() for r in asked.split(",")] if asked else list(hip_toolchains.RELEASES)
    unknown = [r for r in releases if r not in hip_toolchains.RELEASES]
    if unknown:
        print(f"real_world: unknown release {', '.join(unknown)} (the releases: "
              f"{', '.join(hip_toolchains.RELEASES)})", file=sys.stderr)
        return None
    missing = [r for r in releases if r in hip_toolchains.MODERN and hip_toolchains.get(r) is None]
    if missing:
        command = [sys.executable, "tests/harness/fetch_hip_toolchain.py", *[f"--release={r}" for r in missing]]
        print("real_world: fetching HIP toolchains:", " ".join(command), file=sys.stderr)
        subprocess.run(command, cwd=ROOT)
        hip_toolchains.rescan()
    found = {}
    for release in releases:
        toolchain = hip_toolchains.get(release)
        if toolchain is None:
            print(f"real_world: no HIP {release}: {hip_toolchains.why_missing(release)}", file=sys.stderr)
            if asked:
                return None
            continue
        found[release] = toolchain
    if not found:
        print("real_world: no HIP toolchain (see docs/real-world.md for what the harness needs)", file=sys.stderr)
        return None
    return found


def _compiled_with(toolchains: dict) -> str:
    return "; ".join(f"{r}: {t['describe']}" for r, t in toolchains.items())


def combine(runs: list[dict], order: list[str]) -> dict:
    """One record of several runs' results: per release, each code base from the last run that
    has it, in corpus order; `runs` says which run each came from."""
    releases: dict[str, dict] = {}
    source: dict[tuple[str, str], str] = {}
    for run in runs:
        for release, section in run["releases"].items():
            entry = releases.setdefault(release, {"toolchain": section["toolchain"], "codebases": {}})
            for record in section["codebases"]:
                entry["codebases"][record["name"]] = record
                source[release, record["name"]] = run["label"]
    rank = {name: i for i, name in enumerate(order)}
    ordered = [r for r in hip_toolchains.RELEASES if r in releases] + [r for r in releases if r not in
                                                                      hip_toolchains.RELEASES]
    out = {"label": " + ".join(run["label"] for run in runs), "date": max(run["date"] for run in runs),
           "seconds": sum(run["seconds"] for run in runs),
           "runs": [{"label": run["label"], "tool_rev": run["tool_rev"], "date": run["date"],
                     "codebases": sorted({n for (_r, n), label in source.items() if label == run["label"]},
                                         key=lambda n: rank.get(n, len(rank)))} for run in runs],
           "releases": {}}
    for release in ordered:
        records = sorted(releases[release]["codebases"].values(), key=lambda c: rank.get(c["name"], len(rank)))
        out["releases"][release] = {"toolchain": releases[release]["toolchain"], "codebases": records}
    out["tool_rev"] = out["runs"][-1]["tool_rev"]
    return out


def _doc_block(current: dict, baseline: dict | None, detail: bool) -> str:
    by_release = report.from_json(current)
    results = [c for v in current["releases"].values() for c in v["codebases"]]
    cache = (f", {sum(c['from_cache'] for c in results)} of {sum(c['nvcc_valid'] for c in results)} hipcc results "
             "from the compile cache" if all("from_cache" in c for c in results) else "")
    if "runs" in current:
        made = "; ".join(f"`{run['label']}` (cuda2hip {run['tool_rev'][:7]}, {run['date']}): "
                         f"{', '.join(run['codebases'])}" for run in current["runs"])
        intro = f"This version, joined from runs ({made}; {current['seconds']:.0f} s in all{cache})."
    else:
        intro = (f"This version (`{current['label']}`, cuda2hip {current['tool_rev'][:7]}, {current['date']}, "
                 f"{current['seconds']:.0f} s{cache}).")
    parts = [f"{intro} At each release R the corpus is "
             f"migrated with `--target-rocm R` and compiled with R's HIP "
             f"({_compiled_with({r: v['toolchain'] for r, v in current['releases'].items()})})"
             + (", and where a code base ships its own HIP port, that port too: *human port* is how many "
                "nvcc-valid units it compiles, *cuda2hip on fair set* how many of those cuda2hip's output "
                "compiles" if any(c.get("human_port") for c in results) else "") + ":",
             "", report.combined_table(by_release)]
    if detail:
        for release, results in by_release.items():
            parts += ["", f"At {release} ({current['releases'][release]['toolchain']['describe']}):", "",
                      report.markdown_table(results)]
    if baseline:
        parts += ["", f"Before this work (`{baseline['label']}`, cuda2hip {baseline['tool_rev'][:7]}, the same "
                  "corpus and commands):", "", report.combined_table(report.from_json(baseline))]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codebase", action="append", help="run only these code bases (name or slug)")
    parser.add_argument("--release", help="the ROCm releases to migrate for and compile with, comma-separated "
                        f"(default: {','.join(hip_toolchains.RELEASES)}, those whose toolchain is here)")
    parser.add_argument("--reduced", action="store_true", help="only the units listed as `reduced`")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--tool-src", type=Path, default=ROOT, help="the cuda2hip checkout to measure")
    parser.add_argument("--label", help="name of this run (default: the checkout's git description)")
    parser.add_argument("--compare", help="label of an earlier run to show beside this one")
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/real-world.md, docs/benchmarks.md and README.md")
    parser.add_argument("--show", type=int, default=40, help="silent failures to print")
    parser.add_argument("--fetch-only", action="store_true", help="download and extract the sources, run nothing")
    parser.add_argument("--combine", help="labels of earlier runs (comma-separated): join their results, "
                        "later ones winning, and show them (with --write-docs, write them); runs nothing")
    args = parser.parse_args(argv)
    sources, codebases = config.load()
    if args.combine:
        import json

        runs = [json.loads((CACHE / "results" / f"{label.strip()}.json").read_text())
                for label in args.combine.split(",")]
        data = combine(runs, [c.name for c in codebases])
        for release, results in report.from_json(data).items():
            print(f"\n== {release}\n{report.text_table(results)}")
        if args.write_docs:
            DOC.write_text(_replace_between(DOC.read_text(), _doc_block(data, None, detail=True)))
            for short in (BENCHMARKS, README):
                short.write_text(_replace_between(short.read_text(), _doc_block(data, None, detail=False)))
        return 0
    if args.fetch_only:
        # With --reduced: only the sources of the code bases the test suite runs.
        needed = {c.source for c in codebases if c.reduced or not args.reduced}
        for source in sources.values():
            if source.name in needed:
                print(f"{source.name} {source.version}: {fetch.fetch(source, CACHE)}")
        return 0

    for tool in ("nvcc", "dpkg-deb"):
        if shutil.which(tool) is None:
            print(f"real_world: {tool} not found (see docs/real-world.md for what the harness needs)", file=sys.stderr)
            return 2
    tool_src = args.tool_src.resolve()
    label = args.label or _git(tool_src, "describe", "--always", "--dirty") or "unknown"
    if args.reduced:
        label += "-reduced"
    if args.codebase:
        codebases = [c for c in codebases if c.name in args.codebase or c.slug in args.codebase]
        if not codebases:
            print(f"real_world: no code base named {args.codebase}", file=sys.stderr)
            return 2
    toolchains = _toolchains(args.release)
    if toolchains is None:
        return 2
    if not _fetch_library_headers([CUDA_FETCH, *([ROCM_FETCH] if "5.2" in toolchains else [])]):
        return 2
    paths = harness.Paths(CACHE, CUDA_LIBRARY_INCLUDE)
    for release, toolchain in toolchains.items():
        print(f"real_world: {release}: {toolchain.describe()}: {' '.join(toolchain.command)}", file=sys.stderr)

    start = time.monotonic()
    by_release: dict[str, list] = {release: [] for release in toolchains}
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    for codebase in codebases:
        source_root = fetch.fetch(sources[codebase.source], CACHE)
        validated = harness.validate(codebase, source_root, paths, args.jobs, reduced=args.reduced, log=log)
        for release, toolchain in toolchains.items():
            by_release[release].append(harness.build(validated, paths, toolchain, tool_src, label, args.jobs,
                                                     log=log))
    meta = {"tool_rev": _git(tool_src, "rev-parse", "HEAD"), "date": time.strftime("%Y-%m-%d"),
            "seconds": time.monotonic() - start}
    described = {r: {"describe": t.describe(), "rocm_version": t.rocm_version, "hip_version": t.hip_version,
                     "clang_version": t.clang_version, "identity": t.identity, "command": t.command}
                 for r, t in toolchains.items()}
    data = report.to_json(label, meta, by_release, described)
    result_path = CACHE / "results" / f"{label}.json"
    report.save(result_path, data)

    silent_any = refix_any = False
    for release, results in by_release.items():
        print(f"\n== {release}: --target-rocm {release}, compiled with {toolchains[release].describe()}")
        print(report.text_table(results))
        silent = report.silent_list(results)
        silent_any |= bool(silent)
        for line in silent[:args.show]:
            print(f"silent ({release}):", line)
        if len(silent) > args.show:
            print(f"... {len(silent) - args.show} more in {result_path}")
        port_failures = [f"{r.name}: {unit}: {error}" for r in results for unit, error in r.human_errors.items()]
        for line in port_failures[:args.show]:
            print(f"the project's own port fails ({release}):", line)
        for r in results:
            for path in r.refix_changed:
                refix_any = True
                print(f"second fix changes ({release}): {r.name}: {path}")
    print(f"\nresults: {result_path}")
    if args.write_docs:
        import json

        baseline = json.loads((CACHE / "results" / f"{args.compare}.json").read_text()) if args.compare else None
        DOC.write_text(_replace_between(DOC.read_text(), _doc_block(data, baseline, detail=True)))
        for short in (BENCHMARKS, README):
            short.write_text(_replace_between(short.read_text(), _doc_block(data, baseline, detail=False)))
    return 0 if not silent_any and not refix_any else 1


if __name__ == "__main__":
    sys.exit(main())
