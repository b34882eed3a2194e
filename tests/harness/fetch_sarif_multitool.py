"""Fetch Microsoft's SARIF Multitool (github.com/microsoft/sarif-sdk, MIT), the validator SARIF users
run on a log, for the SARIF report tests: its `Sarif.Multitool validate` checks a log against the
SARIF 2.1.0 schema, the specification's rules (SARIF1xxx/2xxx) and GitHub code scanning's ingestion
rules (GH1xxx), and the package carries the schema itself (sarif-2.1.0.json), which the tests also
validate against with jsonschema.

The npm registry serves it as one self-contained Linux package (a single-file .NET executable, no
runtime to install). `npm pack` downloads the pinned version's tarball into a temporary folder,
its sha512 is checked against the integrity pinned here (the registry's `dist.integrity`), and the
package is extracted into DEST in one step (an interrupted fetch leaves no half-filled folder).
Nothing is installed, and no package script runs.

Usage: python tests/harness/fetch_sarif_multitool.py DEST [--refresh]
   DEST/Sarif.Multitool, DEST/sarif-2.1.0.json, DEST/manifest.json
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

PACKAGE = "@microsoft/sarif-multitool-linux"
VERSION = "5.7.0"
# `npm view @microsoft/sarif-multitool-linux@5.7.0 dist.integrity`
INTEGRITY = "sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA=="
EXECUTABLE = "Sarif.Multitool"
SCHEMA = "sarif-2.1.0.json"
# The executable needs no ICU this way (a machine without libicu runs it too); validation does not
# depend on the culture.
ENV = {"DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1", "DOTNET_CLI_TELEMETRY_OPTOUT": "1"}


def integrity(path: Path) -> str:
    digest = hashlib.sha512()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def pack(work: Path) -> Path:
    """The pinned package's tarball, downloaded by npm into `work` and checked against INTEGRITY."""
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm not found: the SARIF Multitool comes from the npm registry (apt-get install npm)")
    proc = subprocess.run([npm, "pack", f"{PACKAGE}@{VERSION}", "--json", "--ignore-scripts",
                           "--pack-destination", str(work)], capture_output=True, text=True, cwd=work)
    if proc.returncode != 0:
        raise SystemExit(f"npm pack {PACKAGE}@{VERSION} failed:\n{proc.stderr.strip()[-2000:]}")
    (info,) = json.loads(proc.stdout)
    tarball = work / info["filename"]
    got = integrity(tarball)
    if got != INTEGRITY:
        raise SystemExit(f"{tarball.name}: integrity {got} is not the pinned {INTEGRITY}")
    return tarball


def extract(tarball: Path, out: Path) -> None:
    """The package's files (under `package/` in the tarball) into `out`: regular files and folders
    only, none outside it."""
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if parts[:1] != ("package",) or ".." in parts or member.name.startswith("/"):
                raise SystemExit(f"{tarball.name}: unexpected member {member.name!r}")
            if member.isdir():
                continue
            if not member.isfile():
                raise SystemExit(f"{tarball.name}: {member.name} is not a regular file")
            target = out.joinpath(*parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            target.chmod(0o644)
    (out / EXECUTABLE).chmod(0o755)


def smoke_test(folder: Path) -> str:
    """The tool's version line: it runs on this machine."""
    proc = subprocess.run([str(folder / EXECUTABLE), "--version"], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=120)
    said = (proc.stdout + proc.stderr).strip()  # (it prints its banner on stderr)
    if proc.returncode != 0 or f"Multitool {VERSION}" not in said:
        raise SystemExit(f"{EXECUTABLE} --version failed here (exit {proc.returncode}):\n{said[-2000:]}")
    return said.splitlines()[0]


def fetch(dest: Path, refresh: bool = False) -> dict:
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file() and (dest / EXECUTABLE).is_file() and not refresh:
        old = json.loads(manifest_path.read_text())
        if (old.get("package"), old.get("version"), old.get("integrity")) == (PACKAGE, VERSION, INTEGRITY):
            print(f"SARIF Multitool {VERSION} already in {dest}")
            return old
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory() as work:
            extract(pack(Path(work)), partial)
        for name in (EXECUTABLE, SCHEMA):
            if not (partial / name).is_file():
                raise SystemExit(f"{PACKAGE}@{VERSION} has no {name}")
        version = smoke_test(partial)
        manifest = {"package": PACKAGE, "version": VERSION, "integrity": INTEGRITY, "runs": version}
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        partial.chmod(0o755)
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            os.replace(dest, old)
        os.replace(partial, dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    print(f"{version} in {dest}")
    return manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--refresh", action="store_true", help="fetch again even if DEST has the pinned version")
    args = ap.parse_args(argv)
    fetch(args.dest, args.refresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
