"""Fetch HIPIFY's CUDA -> HIP/ROC API tables (docs/reference/tables/*.md of HIPIFY rocm-7.0.2, MIT),
the input of tools/generate_rule_data.py and of `cuda2hip coverage --tables`, from Debian's `hipify`
source package.

Debian repacks HIPIFY's release tarball as hipify_7.0.2+dfsg.orig.tar.xz; its sha256 is pinned
here. A private apt state (the system's sources, lists and package status are not touched) reads
the signed Sources index of sid and forky (checked against Debian's keyring), which must list that
file with the pinned sha256; apt then downloads it and checks the hash. Only the tables and
HIPIFY's LICENSE.txt are extracted, into DEST in one step (an interrupted fetch leaves no
half-filled folder). Nothing is installed.

Usage: python tests/harness/fetch_hipify_tables.py DEST [--refresh]
   DEST/*.md, DEST/LICENSE.txt, DEST/manifest.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
from pathlib import Path, PurePosixPath

RELEASE = "rocm-7.0.2"  # HIPIFY's release tag
SOURCE_PACKAGE = "hipify"
ORIG = "hipify_7.0.2+dfsg.orig.tar.xz"
SHA256 = "d350941aa667dbf6a680f6cb0298d0e5c4d867e54697f52e551436515e669fc0"
TOP = f"HIPIFY-{RELEASE}"
TABLES = f"{TOP}/docs/reference/tables/"
LICENSE = f"{TOP}/LICENSE.txt"
# Suites whose Sources may list the pinned tarball (sid moves on: forky keeps a release longer).
SUITES = ("sid", "forky")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MIRROR = "http://deb.debian.org/debian"
FETCH = "python tests/harness/fetch_hipify_tables.py .cache/hipify-tables"


def apt_options(work: Path) -> list[str]:
    (work / "state" / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (work / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    sources = work / "sources.list"
    sources.write_text("".join(f"deb-src [signed-by={KEYRING}] {MIRROR} {suite} main\n" for suite in SUITES))
    return ["-o", f"Dir::State={work}/state", "-o", f"Dir::Cache={work}/cache",
            "-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", "Dir::State::status=/dev/null", "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root", "-qq"]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def listed(showsrc: str) -> list[tuple[str, str, str]]:
    """(version, directory, sha256) of each source record of `apt-cache showsrc` output that lists
    ORIG in its Checksums-Sha256 field."""
    found = []
    for record in showsrc.split("\n\n"):
        fields: dict[str, list[str]] = {}
        key = None
        for line in record.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key].append(line.strip())
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = [value.strip()] if value.strip() else []
        for entry in fields.get("Checksums-Sha256", []):
            parts = entry.split()
            if len(parts) == 3 and parts[2] == ORIG:
                found.append((fields["Version"][0], fields["Directory"][0], parts[0]))
    return found


def download(work: Path) -> tuple[Path, str]:
    """ORIG, checked against the signed index and SHA256; returns (path, the Debian version listing it)."""
    opts = apt_options(work)
    update = run(["apt-get", *opts, "update"])
    if update.returncode != 0 or not list((work / "state" / "lists").glob("*_Sources*")):
        raise SystemExit(f"apt-get update of Debian's source indexes failed: "
                         f"{(update.stderr or update.stdout).strip()[-1500:]}")
    records = listed(run(["apt-cache", *opts, "showsrc", SOURCE_PACKAGE]).stdout)
    if not records:
        raise SystemExit(f"no Debian source package of {', '.join(SUITES)} lists {ORIG} any more: "
                         f"pin a newer HIPIFY release in {__file__} (and regenerate the rule data)")
    for version, directory, sha in records:
        if sha != SHA256:
            raise SystemExit(f"Debian's signed index gives {ORIG} (hipify {version}) sha256 {sha}, "
                             f"not the pinned {SHA256}")
    version, directory, _ = records[0]
    url = f"{MIRROR}/{directory}/{urllib.parse.quote(ORIG)}"
    target = work / ORIG
    got = run(["/usr/lib/apt/apt-helper", "-o", "APT::Sandbox::User=root", "download-file", url, str(target),
               f"SHA256:{SHA256}"])
    if got.returncode != 0 or not target.is_file():
        raise SystemExit(f"downloading {url} failed: {(got.stderr or got.stdout).strip()[-1500:]}")
    return target, version


def extract(tarball: Path, out: Path) -> list[str]:
    """The tables (flat) and LICENSE.txt into `out`; returns the table names."""
    names = []
    with tarfile.open(tarball, "r:xz") as tar:
        for member in tar.getmembers():
            name = member.name
            is_table = name.startswith(TABLES) and name.endswith(".md") and "/" not in name[len(TABLES):]
            if not (is_table or name == LICENSE):
                continue
            if not member.isfile() or ".." in PurePosixPath(name).parts:
                raise SystemExit(f"{tarball.name}: {name} is not a regular file")
            target = out / PurePosixPath(name).name
            with tar.extractfile(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            if is_table:
                names.append(target.name)
    if not names or not (out / "LICENSE.txt").is_file():
        raise SystemExit(f"{tarball.name}: no tables under {TABLES}, or no {LICENSE}")
    return sorted(names)


def fetch(dest: Path, refresh: bool = False) -> dict:
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file() and not refresh:
        old = json.loads(manifest_path.read_text())
        if (old.get("orig"), old.get("sha256")) == (ORIG, SHA256):
            print(f"HIPIFY {RELEASE} tables already in {dest}")
            return old
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory() as work:
            tarball, version = download(Path(work))
            tables = extract(tarball, partial)
        manifest = {"release": RELEASE, "source_package": f"{SOURCE_PACKAGE} {version}", "orig": ORIG,
                    "sha256": SHA256, "license": "MIT (LICENSE.txt)", "tables": tables}
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        partial.chmod(0o755)
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            os.replace(dest, old)
        os.replace(partial, dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    print(f"HIPIFY {RELEASE} tables ({len(tables)}, from Debian's {SOURCE_PACKAGE} {version}) in {dest}")
    return manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--refresh", action="store_true", help="fetch again even if DEST has the pinned tables")
    args = ap.parse_args(argv)
    fetch(args.dest, args.refresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
