"""Fetch the HIP/ROCm headers of every ROCm release Debian packages, one tree per Debian suite, for
the table audit (tools/audit_rule_data.py): bookworm (HIP 5.2, the hipcc installed here), trixie
(HIP 5.7, libraries 5.5-6.1), sid (HIP 6.4, hipBLASLt 7.1, ...) and experimental (ROCm 7.2).

Each suite gets a private apt state (the system's sources, lists and package status are not
touched; apt checks the archive signatures against Debian's keyring and each package's hash),
`apt-get download` of the -dev packages it has, and `dpkg-deb` extraction of what the audit reads:
usr/include, the CMake package files and the lib*.so development links. Nothing is installed.

A suite, or a package of it, that cannot be had (sid is a moving suite and may drop a package; a
mirror may be down) is recorded as missing in DEST/manifest.json, and the audit checks the
releases it has. The manifest names each package's exact version.

Usage: python tests/harness/fetch_rocm_release_headers.py DEST [--refresh]
   DEST/<suite>/usr/include ...; DEST/<suite>/files/<package>.txt (its files);
   DEST/manifest.json {suite: {"packages": {pkg: version}, "missing": [...]}}
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITES = ("bookworm", "trixie", "sid", "experimental")
# The HIP runtime and the -dev package of each ROCm library cuda2hip targets, plus the header-only
# packages their headers include (hipblas-common: hipBLAS/hipBLASLt >= 6.3; hsa: HIP's own).
PACKAGES = (
    "libamdhip64-dev", "libhsa-runtime-dev",
    "libhipblas-dev", "libhipblas-common-dev", "librocblas-dev", "libhipblaslt-dev",
    "libhipfft-dev", "librocfft-dev",
    "libhipsolver-dev", "librocsolver-dev",
    "libhipsparse-dev", "librocsparse-dev",
    "libhiprand-dev", "librocrand-dev",
    "libhipcub-dev", "librocprim-dev", "librocthrust-dev",
    "libmiopen-dev", "librccl-dev",
)
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MIRROR = "http://deb.debian.org/debian"
# What the audit reads of a package: headers, CMake package configs, the lib*.so link names.
MEMBERS = ("./usr/include/*", "./usr/lib/*/cmake/*", "./usr/lib/*/lib*.so")
# A moving suite is fetched again after this long (a week), so the audit follows it.
MAX_AGE = 7 * 24 * 3600


def stamp() -> str:
    return json.dumps({"suites": SUITES, "packages": PACKAGES, "members": MEMBERS})


def apt_options(work: Path, suite: str, *more: str) -> list[str]:
    """apt-get options for a private apt state that sees `suite` (and `more` suites) only."""
    (work / "state" / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (work / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    sources = work / "sources.list"
    sources.write_text("".join(f"deb [signed-by={KEYRING}] {MIRROR} {s} main\n" for s in (suite, *more)))
    return ["-o", f"Dir::State={work}/state", "-o", f"Dir::Cache={work}/cache",
            "-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", "Dir::State::status=/dev/null", "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root", "-qq"]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fetch_suite(suite: str, out: Path, work: Path) -> dict:
    """Download and extract the suite's packages into `out`; returns its manifest entry."""
    opts = apt_options(work, suite)
    update = run(["apt-get", *opts, "update"])
    # apt-get update exits 0 on some fetch failures; an index it could not verify leaves no lists
    lists = list((work / "state" / "lists").glob("*_Packages*"))
    if update.returncode != 0 or not lists:
        return {"packages": {}, "missing": list(PACKAGES),
                "error": f"apt-get update failed: {(update.stderr or update.stdout).strip()[:500]}"}
    debs = work / "debs"
    debs.mkdir(exist_ok=True)
    packages, missing = {}, []
    for pkg in PACKAGES:
        got = run(["apt-get", *opts, "download", pkg], cwd=debs)
        found = sorted(debs.glob(f"{pkg}_*.deb"))
        if got.returncode != 0 or not found:
            missing.append(pkg)
            continue
        version = run(["dpkg-deb", "-f", str(found[-1]), "Version"]).stdout.strip()
        packages[pkg] = version
    for deb in sorted(debs.glob("*.deb")):
        extract(deb, out)
        # which package each extracted file came from: the audit names it for every fact
        pkg = deb.name.split("_", 1)[0]
        files = [line.split(None, 5)[-1].split(" -> ")[0].removeprefix("./")
                 for line in run(["dpkg-deb", "-c", str(deb)]).stdout.splitlines()]
        (out / "files").mkdir(exist_ok=True)
        (out / "files" / f"{pkg}.txt").write_text(
            "".join(f + "\n" for f in files if f.startswith("usr/") and not f.endswith("/")))
    (out / "usr").mkdir(exist_ok=True)
    return {"packages": packages, "missing": missing}


def extract(deb: Path, out: Path, members: tuple[str, ...] = MEMBERS, exclude: tuple[str, ...] = ()) -> None:
    """The `members` of one package into `out` (a package may have none of some patterns; no
    patterns: all of it but `exclude`)."""
    tarball = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(out), *[f"--exclude={e}" for e in exclude], "--wildcards", *members],
                   stdin=tarball.stdout, stderr=subprocess.DEVNULL, check=False)
    tarball.stdout.close()
    if tarball.wait() != 0:
        raise SystemExit(f"{deb}: dpkg-deb could not read the package")


def fetch(dest: Path, refresh: bool = False) -> dict:
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file() and not refresh:
        old = json.loads(manifest_path.read_text())
        fresh = time.time() - old.get("fetched_at", 0) < MAX_AGE
        if old.get("stamp") == stamp() and fresh:
            print(f"ROCm release headers already in {dest}")
            return old
    manifest = {"stamp": stamp(), "fetched_at": int(time.time()), "mirror": MIRROR, "suites": {}}
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        for suite in SUITES:
            with tempfile.TemporaryDirectory() as work:
                out = partial / suite
                out.mkdir()
                entry = fetch_suite(suite, out, Path(work))
            manifest["suites"][suite] = entry
            have = ", ".join(f"{p} {v}" for p, v in entry["packages"].items()) or "nothing"
            print(f"{suite}: {have}")
            if entry["missing"]:
                print(f"{suite}: not available: {', '.join(entry['missing'])}", file=sys.stderr)
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        # Replace DEST in one step so an interrupted fetch never leaves a half-filled tree behind.
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
    got = [s for s, e in manifest["suites"].items() if e["packages"]]
    if not got:
        print("no suite could be fetched", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
