"""Fetch the clang headers that each Debian suite's hipcc compiles HIP code with (its
`__clang_hip_*.h` wrappers declare most of HIP's device functions from ROCm 6 on), for
tools/generate_hip_forms.py: bookworm's clang 15 is the one installed here; trixie's hipcc (HIP 5.7)
uses clang 17, sid's (HIP 6.4) clang 21, experimental's (ROCm 7.2) clang 22.

For each suite: a private apt state (the system's sources, lists and package status are not
touched; apt checks the archive signatures against Debian's keyring and each package's hash), the
clang version `hipcc` depends on, `apt-get download` of `libclang-common-N-dev` and `dpkg-deb`
extraction of its `usr/lib/llvm-N/lib/clang/*/include`. Nothing is installed.

Usage: python tests/harness/fetch_hip_compiler_headers.py DEST [--refresh]
   DEST/<suite>/include/...; DEST/manifest.json {suite: {"clang": N, "package": "name version"}}
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the private apt state of the release-header fetch (same directory)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetch_rocm_release_headers import MIRROR, apt_options, run  # noqa: E402

SUITES = ("trixie", "sid", "experimental")
MAX_AGE = 7 * 24 * 3600  # sid moves: fetch again after a week
FORMAT = "2"
# experimental holds only what is newer than sid (its hipcc's clang is sid's): apt sees both.
OVERLAYS = {"experimental": ("sid",)}


def fetch_suite(suite: str, out: Path, work: Path) -> dict:
    opts = apt_options(work, suite, *OVERLAYS.get(suite, ()))
    if run(["apt-get", *opts, "update"]).returncode != 0 or not list((work / "state" / "lists").glob("*_Packages*")):
        return {"error": "apt-get update failed"}
    # the suite's own hipcc (experimental's, not sid's): `apt-cache show` lists every version
    show = run(["apt-cache", *opts, "show", f"hipcc/{suite}"]).stdout
    m = re.search(r"^Depends:.*\bclang-(\d+)\b", show, re.M)
    if not m:
        return {"error": "hipcc names no clang-N"}
    clang = int(m.group(1))
    pkg = f"libclang-common-{clang}-dev"
    debs = work / "debs"
    debs.mkdir()
    got = run(["apt-get", *opts, "download", pkg], cwd=debs)
    found = sorted(debs.glob(f"{pkg}_*.deb"))
    if got.returncode != 0 or not found:
        return {"error": f"{pkg} could not be downloaded"}
    version = run(["dpkg-deb", "-f", str(found[-1]), "Version"]).stdout.strip()
    tree = work / "tree"
    tree.mkdir()
    tarball = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(found[-1])], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree), "--wildcards", f"./usr/lib/llvm-{clang}/lib/clang/*/include/*"],
                   stdin=tarball.stdout, check=False)
    tarball.stdout.close()
    if tarball.wait() != 0:
        return {"error": f"{found[-1].name}: dpkg-deb could not read the package"}
    include = next((tree / f"usr/lib/llvm-{clang}/lib/clang").glob("*/include"), None)
    if include is None:
        return {"error": f"{pkg} holds no clang include directory"}
    shutil.move(str(include), str(out / "include"))
    return {"clang": clang, "package": f"{pkg} {version}"}


def fetch(dest: Path, refresh: bool = False) -> dict:
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file() and not refresh:
        old = json.loads(manifest_path.read_text())
        if (old.get("format") == FORMAT and list(old.get("suites", {})) == list(SUITES)
                and time.time() - old.get("fetched_at", 0) < MAX_AGE):
            print(f"hipcc's clang headers already in {dest}")
            return old
    manifest = {"format": FORMAT, "fetched_at": int(time.time()), "mirror": MIRROR, "suites": {}}
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        for suite in SUITES:
            (partial / suite).mkdir()
            with tempfile.TemporaryDirectory() as work:
                entry = manifest["suites"][suite] = fetch_suite(suite, partial / suite, Path(work))
            print(f"{suite}: {entry.get('package') or entry.get('error')}")
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        # Replace DEST in one step: an interrupted fetch never leaves a half-filled tree.
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            os.replace(dest, old)
        os.replace(partial, dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--refresh", action="store_true", help="fetch again even if DEST is recent")
    args = ap.parse_args(argv)
    manifest = fetch(args.dest, args.refresh)
    return 0 if any("clang" in e for e in manifest["suites"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
