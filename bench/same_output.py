"""Byte-identity of two installations' outputs on the real-world corpus: what a speed change
must keep.

    python bench/same_output.py run --python VENV/bin/python --out RESULTS [--releases 7.2,6.4,5.2]
                                    [--trees cuda-samples,...] [--inputs DIR]
    python bench/same_output.py compare RESULTS_A RESULTS_B

For each release R and staged tree T, `run` calls, with the given interpreter (its installed
cuda2hip), in the folder of the staged trees:
    cuda2hip fix --output-dir OUT --no-cache --target-rocm R T
    cuda2hip check --format json --no-cache --target-rocm R T
and keeps the fixed tree, the JSON report, the exit codes and stderr. The input trees are staged
once (bench/realworld/corpus.toml's file selection of each code base, from .cache/real-world/
sources) under --inputs, so both installations read the same bytes. `compare` prints every file
that differs and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RELEASES = ("7.2", "6.4", "5.2")


def stage_inputs(inputs: Path) -> list[str]:
    done = inputs / ".staged"
    if not done.is_file():
        sys.path.insert(0, str(HERE))
        from realworld import config, units

        sources = REPO / ".cache" / "real-world" / "sources"
        _, codebases = config.load()
        for cb in codebases:
            if (sources / cb.source).is_dir():
                units.stage(cb, sources / cb.source, inputs / cb.slug)
        done.write_text("\n".join(sorted(p.name for p in inputs.iterdir() if p.is_dir())))
    return done.read_text().split()


def run(python: str, out: Path, inputs: Path, releases: list[str], trees: set[str]) -> None:
    names = [n for n in stage_inputs(inputs) if not trees or n in trees]
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="same-output-cache-"))
    env = dict(os.environ, CUDA2HIP_CACHE_DIR=str(cache), CUDA2HIP_NO_PROGRESS="1")
    times = {}
    for rel in releases:
        for name in names:
            dest = out / rel / name
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            for what, args in (("fix", ["fix", "--output-dir", str(dest / "fixed"), "--no-cache",
                                        "--target-rocm", rel, name]),
                               ("check", ["check", "--format", "json", "--no-cache",
                                          "--target-rocm", rel, name])):
                start = time.time()
                res = subprocess.run([python, "-m", "cuda2hip", *args], cwd=inputs, env=env,
                                     capture_output=True)
                times[f"{rel}/{name}/{what}"] = round(time.time() - start, 2)
                (dest / (f"{what}.json" if what == "check" else f"{what}.stdout")).write_bytes(res.stdout)
                (dest / f"{what}.stderr").write_bytes(res.stderr)
                (dest / f"{what}.rc").write_text(str(res.returncode))
                print(f"{rel} {name} {what}: exit {res.returncode}, {times[f'{rel}/{name}/{what}']} s",
                      flush=True)
    (out / "times.json").write_text(json.dumps(times, indent=1))
    shutil.rmtree(cache, ignore_errors=True)


def compare(a: Path, b: Path) -> int:
    a, b = a.resolve(), b.resolve()
    bad = 0

    def walk(cmp: filecmp.dircmp, rel: str) -> None:
        nonlocal bad
        for n in cmp.left_only + cmp.right_only + cmp.funny_files:
            bad += 1
            print(f"only on one side: {rel}/{n}")
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        for n in mismatch + errors:
            if n == "times.json":
                continue
            if n.endswith(".stderr"):  # the summary names the output folder
                left = Path(cmp.left, n).read_bytes().replace(str(a).encode(), b"OUT")
                right = Path(cmp.right, n).read_bytes().replace(str(b).encode(), b"OUT")
                if left == right:
                    continue
            bad += 1
            print(f"differs: {rel}/{n}")
        for n, sub in cmp.subdirs.items():
            walk(sub, f"{rel}/{n}")

    walk(filecmp.dircmp(a, b), "")
    files = sum(len(fs) for _, _, fs in os.walk(a))
    print(f"{'IDENTICAL' if not bad else f'{bad} DIFFERENCES'} ({files} files: {a} vs {b})")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--inputs", type=Path, default=Path(tempfile.gettempdir()) / "cuda2hip-same-output-in")
    r.add_argument("--releases", default=",".join(RELEASES))
    r.add_argument("--trees", default="")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "compare":
        return compare(args.a, args.b)
    run(args.python, args.out.resolve(), args.inputs.resolve(), args.releases.split(","),
        set(filter(None, args.trees.split(","))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
