"""The parse floor of a tree: a Python process that only reads every source file of the tree
and parses it once with cuda2hip's tree-sitter-cuda parser, on N worker processes, then exits.

No tool that parses each file with that grammar in Python runs faster, so bench/run.py prints
it beside `fix`'s figure: what the analysis, the fixes and the writes cost is the difference.

    python bench/parse_floor.py TREE [--jobs N]

Run it with the interpreter that has cuda2hip installed (bench/run.py uses its virtualenv's).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# the files bench/run.py counts the lines of
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl", ".hip"}


def _parse_all(paths: list[str]) -> None:
    from cuda2hip.lang import parse

    for path in paths:
        with open(path, "rb") as fh:
            parse.parse("cuda", fh.read())


def shares(paths: list[Path], jobs: int) -> list[list[str]]:
    """`jobs` lists of about equal bytes: the largest file first to the lightest share."""
    out: list[list[str]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for size, path in sorted(((p.stat().st_size, str(p)) for p in paths), reverse=True):
        k = load.index(min(load))
        out[k].append(path)
        load[k] += size
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    paths = [p for p in args.tree.rglob("*")
             if p.suffix.lower() in SOURCE_SUFFIXES and p.is_file() and not p.is_symlink()]
    if not paths:
        sys.exit(f"{args.tree}: no source files")
    parts = [s for s in shares(paths, max(1, args.jobs)) if s]
    from cuda2hip.lang import parse

    parse.parser("cuda")  # the grammar is loaded once, before the workers fork
    if len(parts) == 1:
        _parse_all(parts[0])
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(len(parts)) as pool:
        pool.map(_parse_all, parts, chunksize=1)


if __name__ == "__main__":
    main()
