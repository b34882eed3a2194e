"""Generate rules/api/data/releases/successors.json: target names of the tables that a later ROCm release
replaced by another name, and from which release the rewriter writes the new one.

hipBLAS 3.0 (ROCm 7.0) dropped the `_v2` functions of hipBLAS 2.x (which took `hipDataType` and
`hipComplex` while the plain names still took `hipblasDatatype_t` / `hipblasComplex`, unless built
with -DHIPBLAS_V2): from then on the plain names have the `_v2` signatures. The tables map cuBLAS
to the `_v2` names (right for ROCm 6.x); for 7.x the rewriter must write the plain ones.

A table target `X_v2` gets the successor `X` when the newest fetched release's headers do not
declare `X_v2` but declare a function `X`, and the release before it declared `X_v2`. The release
the successor applies from is the major release that made the change (hipBLAS 3.0 = ROCm 7.0; the
releases between the checked ones were not fetched: the note says which were checked).

Usage: python tools/generate_successor_data.py [--headers DIR]
   DIR: tests/harness/fetch_rocm_release_headers.py's tree (default .cache/rocm-release-headers)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "rules" / "api" / "data"
OUT = DATA / "releases" / "successors.json"
# (older suite, newer suite, release the change came with, library, where it is documented)
CHANGES = [
    ("sid", "experimental", "7.0", "hipBLAS",
     "hipBLAS 3.0 (ROCm 7.0) removed the `_v2` functions; the plain names take hipDataType / hipComplex: "
     "https://github.com/ROCm/hipBLAS/blob/develop/CHANGELOG.md"),
]
_TOKEN = re.compile(r"\b\w+\b")
_CALL = re.compile(r"\b(\w+)\s*\(")


def declared(tree: Path) -> tuple[set[str], set[str]]:
    """(identifiers, names followed by `(`) of every header under tree/usr/include."""
    words: set[str] = set()
    calls: set[str] = set()
    for path in sorted((tree / "usr" / "include").rglob("*")):
        if path.is_file() and path.suffix in (".h", ".hpp", ".hh", ".cuh", ".inl", ""):
            text = path.read_text(encoding="utf-8", errors="replace")
            words.update(_TOKEN.findall(text))
            calls.update(_CALL.findall(text))
    return words, calls


def versions(headers: Path) -> dict:
    manifest = json.loads((headers / "manifest.json").read_text())
    return {suite: info.get("packages", {}) for suite, info in manifest.get("suites", {}).items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--headers", type=Path, default=ROOT / ".cache" / "rocm-release-headers")
    args = ap.parse_args(argv)
    packages = versions(args.headers)
    out: dict[str, list[str]] = {}
    for old, new, release, library, source in CHANGES:
        old_words, _ = declared(args.headers / old)
        new_words, new_calls = declared(args.headers / new)
        checked = (f"checked: declared by Debian {old} libhipblas-dev {packages[old].get('libhipblas-dev', '?')}, "
                   f"not by {new} {packages[new].get('libhipblas-dev', '?')}, which declares the plain name")
        for table in sorted(DATA.glob("*.json")):
            if table.name == OUT.name:
                continue
            rows = json.loads(table.read_text())["names"]
            for row in rows.values():
                hip = row[0]
                if not hip or not hip.endswith("_v2") or hip in out:
                    continue
                plain = hip[:-3]
                if hip in old_words and hip not in new_words and plain in new_calls:
                    out[hip] = [release, plain, f"{library}: {source}; {checked}"]
    text = json.dumps({"successors": dict(sorted(out.items()))}, indent=1) + "\n"
    OUT.write_text(text)
    print(f"{len(out)} successors -> {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
