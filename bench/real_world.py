"""The real-world yardstick: after `cuda2hip fix`, does real CUDA code build with hipcc, and
where it does not, did cuda2hip say why at the failing line?

    python bench/real_world.py                     # whole corpus, the cuda2hip of this checkout
    python bench/real_world.py --codebase cupy     # one code base (repeatable)
    python bench/real_world.py --reduced           # the few units the test suite runs
    python bench/real_world.py --fetch-only        # download the pinned sources (.ci/run does it)
    python bench/real_world.py --tool-src DIR --label before   # another checkout of cuda2hip
    python bench/real_world.py --write-docs --compare before   # table into docs/real-world.md and README

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

# Resolved: checkouts whose .cache is a symlink to one shared folder must agree on its paths.
CACHE = Path(os.environ.get("CUDA2HIP_REAL_WORLD_CACHE", ROOT / ".cache" / "real-world")).resolve()
CUDA_LIBRARY_INCLUDE = ROOT / ".cache" / "cuda-library-headers" / "include"
ROCM_LIBRARY_INCLUDE = ROOT / ".cache" / "rocm-library-headers" / "usr" / "include"
DOC = ROOT / "docs" / "real-world.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- real-world table: begin -->", "<!-- real-world table: end -->"


def _git(tool_src: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(tool_src), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _replace_between(text: str, block: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"markers {BEGIN} ... {END} not found")
    return pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text)


# The library headers both compilers need, fetched on first use by the project's own scripts (the
# ones the tests use), so that one command runs the harness from a fresh clone.
HEADER_FETCHES = (
    (CUDA_LIBRARY_INCLUDE, [sys.executable, "tests/harness/fetch_cuda_library_headers.py", ".cache/cuda-library-headers"]),
    (ROCM_LIBRARY_INCLUDE, ["bash", "tests/harness/fetch_rocm_library_headers.sh", ".cache/rocm-library-headers"]),
)


def _fetch_library_headers() -> bool:
    for include, command in HEADER_FETCHES:
        if include.is_dir():
            continue
        print("real_world: fetching library headers:", " ".join(command), file=sys.stderr)
        if subprocess.run(command, cwd=ROOT).returncode != 0 or not include.is_dir():
            print(f"real_world: could not fetch {include}; run by hand: {' '.join(command)}", file=sys.stderr)
            return False
    return True


def _doc_block(current: dict, baseline: dict | None) -> str:
    parts = [f"This version (`{current['label']}`, cuda2hip {current['tool_rev'][:7]}, {current['date']}, "
             f"{current['seconds']:.0f} s with a warm "
             f"compile cache):", "", report.markdown_table(report.from_json(current))]
    if baseline:
        parts += ["", f"Before this work (`{baseline['label']}`, cuda2hip {baseline['tool_rev'][:7]}, the same corpus and "
                  "commands):", "",
                  report.markdown_table(report.from_json(baseline))]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codebase", action="append", help="run only these code bases (name or slug)")
    parser.add_argument("--reduced", action="store_true", help="only the units listed as `reduced`")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--tool-src", type=Path, default=ROOT, help="the cuda2hip checkout to measure")
    parser.add_argument("--label", help="name of this run (default: the checkout's git description)")
    parser.add_argument("--compare", help="label of an earlier run to show beside this one")
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/real-world.md and README.md")
    parser.add_argument("--show", type=int, default=40, help="silent failures to print")
    parser.add_argument("--fetch-only", action="store_true", help="download and extract the sources, run nothing")
    args = parser.parse_args(argv)
    sources, codebases = config.load()
    if args.fetch_only:
        for source in sources.values():
            print(f"{source.name} {source.version}: {fetch.fetch(source, CACHE)}")
        return 0

    for tool in ("nvcc", "hipcc", "dpkg-deb"):
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
    if not _fetch_library_headers():
        return 2
    paths = harness.Paths(CACHE, CUDA_LIBRARY_INCLUDE, ROCM_LIBRARY_INCLUDE)

    start = time.monotonic()
    results = []
    for codebase in codebases:
        source_root = fetch.fetch(sources[codebase.source], CACHE)
        results.append(harness.run_codebase(codebase, source_root, paths, tool_src, label, args.jobs,
                                            reduced=args.reduced, log=lambda m: print(m, file=sys.stderr)))
    meta = {"tool_rev": _git(tool_src, "rev-parse", "HEAD"), "date": time.strftime("%Y-%m-%d"),
            "seconds": time.monotonic() - start, "target_rocm": harness.TARGET_ROCM}
    data = report.to_json(label, meta, results)
    report.save(CACHE / "results" / f"{label}.json", data)

    print(report.text_table(results))
    silent = report.silent_list(results)
    for line in silent[:args.show]:
        print("silent:", line)
    if len(silent) > args.show:
        print(f"... {len(silent) - args.show} more in {CACHE / 'results' / (label + '.json')}")
    for r in results:
        for path in r.refix_changed:
            print(f"second fix changes: {r.name}: {path}")
    if args.write_docs:
        import json

        baseline = json.loads((CACHE / "results" / f"{args.compare}.json").read_text()) if args.compare else None
        block = _doc_block(data, baseline)
        for target in (DOC, README):
            target.write_text(_replace_between(target.read_text(), block))
    return 0 if not silent and not any(r.refix_changed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
