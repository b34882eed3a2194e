"""Measure the precision of the semantic rules (HIP3xx-HIP5xx) on the real-world corpus.

    python tools/semantic_precision.py                      # counts, sample, verdicts -> table
    python tools/semantic_precision.py --todo               # sampled findings that lack a verdict
    python tools/semantic_precision.py --show HIP405        # the sampled findings of one rule, with code
    python tools/semantic_precision.py --write              # the table into docs/semantic-rules.md

The corpus is the harness's (bench/realworld/corpus.toml; fetched on first use). Each code base
is staged into WORK/<slug>/in and checked with every rule of HIP3-HIP5 (the opt-in ones too) and
HIP600 (which lints the CUDA in Python strings), in two runs: `--target-rocm 5.2` (the harness's
target) and at the default target (ROCm 7.2, where HIP402 speaks instead of HIP403). A
finding is (code base, path, line, column, code); one that both runs report counts once.

Sample: all findings of a rule with fewer than 30, else the 30 whose sha256 of SEED and the
finding's key sorts first. A finding keeps its place in the order whatever else is found, so after
a fix removes false positives, the next findings of the order join the sample and the verdicts
already given stay valid.

Verdicts (docs/semantic-rules-review.csv): code base, path, line, column, code, verdict (true /
false), reason. A verdict whose finding is no longer reported is shown as `gone` (a fixed false
positive, or a true positive lost: the tool lists them).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from realworld import config, fetch, units  # noqa: E402

SELECT = "HIP3,HIP4,HIP5,HIP600"
RUNS = {"rocm-5.2": ["--target-rocm", "5.2"], "default": []}
SAMPLE = 30
SEED = "cuda2hip-precision-1"
REVIEW = ROOT / "docs" / "semantic-rules-review.csv"
FIELDS = ["codebase", "path", "line", "column", "code", "verdict", "reason"]
DOC = ROOT / "docs" / "semantic-rules.md"
BEGIN, END = "<!-- precision table: begin (tools/semantic_precision.py --write) -->", "<!-- precision table: end -->"
CACHE = Path(os.environ.get("CUDA2HIP_REAL_WORLD_CACHE", ROOT / ".cache" / "real-world"))


def _check(tree: Path, args: list[str]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "cuda2hip", "check", "--isolated", "--no-cache", "--select", SELECT,
                           "--format", "json", *args, "."], cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1, 2) or not proc.stdout.strip():
        raise SystemExit(f"check failed in {tree}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)["findings"]


def collect(work: Path) -> dict[tuple, dict]:
    """key -> finding (with `runs`: the runs that report it) over the whole corpus."""
    sources, codebases = config.load()
    found: dict[tuple, dict] = {}
    work.mkdir(parents=True, exist_ok=True)
    if not (work / ".git").exists():
        # A repository of its own (as the harness's work folders): the .gitignore of the project
        # that holds .cache/ would hide the whole tree.
        subprocess.run(["git", "init", "-q", str(work)], check=True)
    for codebase in codebases:
        tree = work / codebase.slug / "in"
        units.stage(codebase, fetch.fetch(sources[codebase.source], CACHE), tree)
        for run, args in RUNS.items():
            for f in _check(tree, args):
                if f["code"][3] not in "345":
                    continue
                key = (codebase.slug, f["path"], f["line"], f["column"], f["code"])
                entry = found.setdefault(key, dict(f, codebase=codebase.slug, runs=[]))
                entry["runs"].append(run)
    return found


def order(key: tuple) -> str:
    return hashlib.sha256(json.dumps([SEED, *key]).encode()).hexdigest()


def sample(found: dict[tuple, dict]) -> dict[str, list[tuple]]:
    by_rule = defaultdict(list)
    for key in found:
        by_rule[key[4]].append(key)
    return {code: sorted(keys, key=order)[:SAMPLE] for code, keys in sorted(by_rule.items())}


def _key(row: dict) -> tuple:
    return (row["codebase"], row["path"], int(row["line"]), int(row["column"]), row["code"])


def read_verdicts(path: Path) -> dict[tuple, dict]:
    if not path.is_file():
        return {}
    with path.open(newline="") as fh:
        return {_key(row): row for row in csv.DictReader(fh)}


def table(found: dict, sampled: dict, verdicts: dict) -> tuple[list[str], list[str]]:
    lines = ["| rule | findings | reviewed | true | false | precision |", "|---|---:|---:|---:|---:|---:|"]
    todo = []
    for code, keys in sampled.items():
        total = sum(1 for k in found if k[4] == code)
        given = [verdicts[k]["verdict"] for k in keys if k in verdicts]
        todo += [k for k in keys if k not in verdicts]
        true, false = given.count("true"), given.count("false")
        precision = f"{100 * true / (true + false):.0f}%" if true + false else "-"
        lines.append(f"| {code} | {total} | {true + false} | {true} | {false} | {precision} |")
    return lines, todo


def write_table(doc: Path, lines: list[str], found: dict) -> None:
    """The table between the markers of `doc`, with what it was measured on."""
    codebases = sorted({k[0] for k in found})
    block = "\n".join([f"Measured on {', '.join(codebases)} (`--target-rocm 5.2` and the default, 7.2).", "", *lines])
    text = doc.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"markers {BEGIN} ... {END} not found in {doc}")
    doc.write_text(pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text))


def _frame(work: Path, key: tuple, context: int = 6) -> str:
    path = work / key[0] / "in" / key[1]
    text = path.read_text(errors="replace").splitlines()
    line = key[2]
    lo, hi = max(1, line - context), min(len(text), line + 2)
    return "\n".join(f"{'>' if n == line else ' '}{n:5d}  {text[n - 1]}" for n in range(lo, hi + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=CACHE / "precision", help="where the inputs are staged")
    parser.add_argument("--review", type=Path, default=REVIEW, help="the verdicts CSV")
    parser.add_argument("--todo", action="store_true", help="list the sampled findings without a verdict")
    parser.add_argument("--show", metavar="CODE", help="print the sampled findings of CODE with their code")
    parser.add_argument("--context", type=int, default=6, help="lines before a finding --show prints")
    parser.add_argument("--dump", type=Path, help="write every finding (JSON) here")
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    parser.add_argument("--load", type=Path, help="read the findings a --dump wrote instead of running the checks")
    args = parser.parse_args(argv)

    if args.load:
        found = {tuple(f.pop("key")): f for f in json.loads(args.load.read_text())}
    else:
        found = collect(args.work)
    if args.dump:
        args.dump.write_text(json.dumps([dict(v, key=list(k)) for k, v in sorted(found.items())], indent=1))
    sampled = sample(found)
    verdicts = read_verdicts(args.review)
    lines, todo = table(found, sampled, verdicts)
    print("\n".join(lines))
    if args.write:
        write_table(DOC, lines, found)
    gone = [k for k in verdicts if k not in found]
    for k in gone:
        print(f"gone: {':'.join(map(str, k))}  (was {verdicts[k]['verdict']}: {verdicts[k]['reason']})")
    if args.todo:
        for k in todo:
            print("todo:", ",".join(map(str, k)))
    if args.show:
        for k in sampled.get(args.show, []):
            f = found[k]
            mark = verdicts[k]["verdict"] if k in verdicts else "?"
            print(f"\n## [{mark}] {k[0]}/{k[1]}:{k[2]}:{k[3]} {k[4]} ({'/'.join(f['runs'])})\n{f['message']}")
            print(_frame(args.work, k, args.context))
    return 0


if __name__ == "__main__":
    sys.exit(main())
