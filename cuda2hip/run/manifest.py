"""What `fix --output-dir` wrote, so that the output tree matches the input run after run.

Each run records the files and links it wrote into OUT (each with its size and modification
time, or its link text), in the user's cache folder (store.cache_dir(), `output-trees/`, one
record per OUT: OUT itself holds nothing but the migrated tree). The next run into the same OUT
removes the entries of that record which it did not produce again (a source deleted or renamed
since, a file now excluded) — only while each is still exactly what the earlier run wrote: a
file changed, or made, by someone else is never removed, nor anything the record does not name.
Folders that such a removal leaves empty go too. Without a record (a first run, a cache cleared
or not to be trusted) nothing is removed.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

FOLDER = "output-trees"


def record_path(out: Path) -> Path | None:
    """Where the record of the output tree `out` is kept (None: no cache folder to keep it in)."""
    from ..cache.digest import blake2b
    from ..cache.store import cache_dir

    base = cache_dir()
    if base is None:
        return None
    key = blake2b(os.fsencode(os.path.realpath(out)), digest_size=16).hexdigest()
    return base / FOLDER / f"{key}.json"


def _entry(path: Path) -> dict | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return {"kind": "link", "target": os.readlink(path)}
    if stat.S_ISREG(st.st_mode):
        return {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    return None


def _plain(rel: object) -> bool:
    """A relative path of plain names (what a record written by cuda2hip holds)."""
    return isinstance(rel, str) and bool(rel) and not rel.startswith("/") \
        and all(p not in ("", ".", "..") for p in rel.split("/"))


def _earlier(record: Path | None) -> dict[str, dict]:
    if record is None:
        return {}
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return {}  # no record (a first run, or an unreadable one): nothing is removed
    entries = data.get("entries") if isinstance(data, dict) else None
    return {rel: e for rel, e in entries.items() if _plain(rel) and isinstance(e, dict)} \
        if isinstance(entries, dict) else {}


def _inside_without_links(out: Path, rel: str) -> bool:
    """Whether every folder on the way from OUT to `rel` is a real folder (no link leads out)."""
    d = out
    for part in rel.split("/")[:-1]:
        d = d / part
        try:
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                return False
        except OSError:
            return False
    return True


def sync(out: Path, produced: list[Path]) -> list[str]:
    """Remove what the earlier run of OUT wrote and this one (`produced`: paths inside OUT) did
    not, then record this run's. Returns the relative paths removed."""
    out = Path(os.path.realpath(out))
    record = record_path(out)
    now: dict[str, dict] = {}
    for path in produced:
        try:
            rel = Path(os.path.abspath(path)).relative_to(out).as_posix()
        except ValueError:
            continue
        entry = _entry(out / rel)
        if entry is not None:
            now[rel] = entry
    removed = []
    for rel, entry in sorted(_earlier(record).items()):
        if rel in now or not _inside_without_links(out, rel):
            continue
        path = out / rel
        if _entry(path) != entry:
            continue  # changed (or replaced) since: someone else's now
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(rel)
        parent = path.parent
        while parent != out:
            try:
                os.rmdir(parent)  # only if empty
            except OSError:
                break
            parent = parent.parent
    if record is None:
        return removed
    text = json.dumps({"output": str(out), "entries": now}, indent=0, sort_keys=True).encode()
    try:
        same = record.read_bytes() == text
    except OSError:
        same = False
    if not same:
        from ..fix.writeback import atomic_write

        record.parent.parent.mkdir(mode=0o700, exist_ok=True)  # the cache folder: private
        record.parent.mkdir(mode=0o700, exist_ok=True)
        atomic_write(record, text, mode=0o600, durable=False)
    return removed
