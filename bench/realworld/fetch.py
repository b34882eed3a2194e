"""Download and extract the pinned sources of the corpus (PyPI sdists, Debian packages).

Every archive is checked against the sha256 pinned in corpus.toml before it is extracted; a
mismatch is an error, never a silent update. Extraction goes to a temporary folder renamed into
place, so an interrupted fetch leaves nothing half-extracted.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

from .config import Source


PYPI = "https://pypi.org/pypi"  # PyPI's JSON API: PYPI/PACKAGE/json


class FetchError(Exception):
    pass


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, dest: Path) -> None:
    partial = dest.with_name(dest.name + ".partial")
    with urllib.request.urlopen(url, timeout=600) as resp, partial.open("wb") as out:
        shutil.copyfileobj(resp, out)
    partial.rename(dest)


def _pypi_sdist(source: Source, downloads: Path, pypi: str) -> Path:
    index = f"{pypi}/{source.package}/json"
    with urllib.request.urlopen(index, timeout=60) as resp:
        files = json.load(resp)["releases"].get(source.version, [])
    for file in files:
        if file["packagetype"] == "sdist" and file["digests"]["sha256"] == source.sha256:
            dest = downloads / file["filename"]
            if not dest.is_file():
                # A mirror may give relative URLs.
                _download(urllib.parse.urljoin(index, file["url"]), dest)
            return dest
    raise FetchError(f"{source.package} {source.version}: no sdist with sha256 {source.sha256} on PyPI")


def _debian_package(source: Source, downloads: Path) -> Path:
    name = f"{source.package}_{source.version}_all.deb"
    dest = downloads / name
    if dest.is_file():
        return dest
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        for sub in ("state/lists/partial", "cache/archives/partial", "debs"):
            (work_dir / sub).mkdir(parents=True)
        (work_dir / "sources.list").write_text(
            f"deb [signed-by={keyring}] http://deb.debian.org/debian {source.suite} {source.component}\n")
        # A private apt state: the system's sources, lists and package status are not touched.
        opts = ["-o", f"Dir::State={work_dir}/state", "-o", f"Dir::Cache={work_dir}/cache",
                "-o", f"Dir::Etc::SourceList={work_dir}/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
                "-o", "Dir::State::status=/dev/null", "-o", "Debug::NoLocking=1",
                "-o", "APT::Sandbox::User=root", "-qq"]
        subprocess.run(["apt-get", *opts, "update"], check=True)
        subprocess.run(["apt-get", *opts, "download", f"{source.package}={source.version}"],
                       cwd=work_dir / "debs", check=True)
        debs = list((work_dir / "debs").glob("*.deb"))
        if len(debs) != 1:
            raise FetchError(f"{source.package} {source.version}: apt downloaded {debs}")
        shutil.move(str(debs[0]), dest.with_name(name + ".partial"))
        dest.with_name(name + ".partial").rename(dest)
    return dest


def _extract(archive: Path, dest: Path, kind: str) -> None:
    partial = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        if kind == "debian":
            subprocess.run(["dpkg-deb", "-x", str(archive), str(partial)], check=True)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(partial, filter="data")  # no links or paths out of the folder
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def fetch(source: Source, cache: Path, pypi: str = PYPI) -> Path:
    """The extracted tree of a source (downloaded and extracted on first use)."""
    downloads = cache / "downloads"
    sources = cache / "sources"
    downloads.mkdir(parents=True, exist_ok=True)
    sources.mkdir(parents=True, exist_ok=True)
    dest = sources / source.name
    stamp = dest / ".fetched"
    if stamp.is_file() and stamp.read_text() == source.sha256:
        return dest
    archive = _debian_package(source, downloads) if source.type == "debian" else _pypi_sdist(source, downloads, pypi)
    actual = _sha256(archive)
    if actual != source.sha256:
        archive.unlink()
        raise FetchError(f"{archive.name}: sha256 {actual}, pinned {source.sha256}")
    _extract(archive, dest, source.type)
    stamp.write_text(source.sha256)
    return dest
