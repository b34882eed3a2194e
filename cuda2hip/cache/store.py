"""The one store of what cuda2hip keeps between runs: per-file results (result_cache.py) and the
rule data compiled into a ready-to-load form (validated rules, name tables, pre-filter words,
what local headers define). Every value is found under a key made by `key`, which covers the
code that made it: cuda2hip's own code, the Python that runs it, and the version and binaries of
every package that decides a result (the parsers tree-sitter, tree-sitter-cuda, -cmake, -make
and libcst; google-re2 and pyahocorasick, which match; msgspec and PyYAML, which read rules).
An upgrade of any of them, or an edit of an editable install, gives new keys: nothing stale is
ever read.

One SQLite file in the cache folder (CUDA2HIP_CACHE_DIR, else $XDG_CACHE_HOME/cuda2hip or
~/.cache/cuda2hip), private to its user (the folder 0700, the file 0600; a folder another user
owns or others can write is not used at all: whoever can write the store decides what a run
writes into the files it fixes). Values are written in one transaction at the end of a run:
a failed write (a full disk) leaves nothing half-written and no temporary file. Values unused for
PRUNE_AFTER_DAYS go. Best effort: an unreadable, locked or damaged store only costs speed.
"""

from __future__ import annotations

import os
import sys
import time
from functools import lru_cache
from pathlib import Path

from ..system.trust import untrusted
from .digest import blake2b

DB_NAME = "store-v2.sqlite3"
PRUNE_AFTER_DAYS = 30
# What earlier versions kept in the cache folder, removed when the store is made.
_OLD = ("rules-", "prefilter-", "tables-", "content-hashes-", "facts-", "results-v", "store-v1.")

# Import name -> distribution name of the packages whose version decides a result.
RESULT_PACKAGES = {"tree_sitter": "tree_sitter", "tree_sitter_cuda": "tree_sitter_cuda",
                   "tree_sitter_cmake": "tree_sitter_cmake", "tree_sitter_make": "tree_sitter_make",
                   "libcst": "libcst", "re2": "google_re2", "ahocorasick": "pyahocorasick",
                   "msgspec": "msgspec", "yaml": "pyyaml"}


def cache_dir() -> Path | None:
    """The cache folder; None when it may not be trusted (trust.py), with a warning."""
    base = os.environ.get("CUDA2HIP_CACHE_DIR")
    if base:
        path = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = Path(xdg) / "cuda2hip" if xdg else Path.home() / ".cache" / "cuda2hip"
    return path if _trusted_dir(str(path)) else None


@lru_cache(maxsize=8)
def _trusted_dir(path: str) -> bool:
    if not os.path.lexists(path):
        return True  # made private when first written
    reason = untrusted(Path(path))
    if reason is None:
        return True
    print(f"cuda2hip: warning: not using the cache directory {path}: {reason}, who could put "
          "results into it that a run would write into your files; `chmod go-w` it, or set "
          "CUDA2HIP_CACHE_DIR to a directory of your own", file=sys.stderr)
    return False


# -- keys ------------------------------------------------------------------------------------------

_CODE_KEY: bytes | None = None
_PACKAGE = Path(__file__).resolve().parents[1]  # cuda2hip/ (this is cuda2hip/cache/store.py)


def code_key() -> bytes:
    """What every key covers: this Python, cuda2hip's code (its files' sizes and times: an
    editable install changes under the store) and the versions and binaries of
    RESULT_PACKAGES, as this process imports them. Read once per process."""
    global _CODE_KEY
    if _CODE_KEY is None:
        from importlib.util import find_spec

        own = installed()
        parts = [sys.version, own] if own else [sys.version, *_stats(_PACKAGE, ".py",
                                                                      recursive=True)]
        listings: dict[str, list[str]] = {}
        for module, dist in RESULT_PACKAGES.items():
            spec = find_spec(module)
            if spec is None or spec.origin is None:
                parts.append(f"{module}: absent")
                continue
            where = Path(spec.origin).parent
            site = str(where.parent if spec.submodule_search_locations else where)
            if site not in listings:
                try:
                    listings[site] = sorted(os.listdir(site))
                except OSError:
                    listings[site] = []
            infos = [n for n in listings[site] if n.endswith(".dist-info")
                     and n.split("-", 1)[0].lower().replace(".", "_") == dist]
            parts.append(f"{module}: {infos}")
            # the binaries: a package's own (a rebuilt grammar), or the extension module itself
            parts.extend(_stats(where, ".so", recursive=False) if spec.submodule_search_locations
                         else [_stat_line(spec.origin)])
        _CODE_KEY = blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).digest()
    return _CODE_KEY


@lru_cache(maxsize=1)
def installed() -> str | None:
    """What identifies a regular install of cuda2hip (the name and stat of its dist-info's
    RECORD, which every install rewrites; it lists every file of the package, the built-in
    rules included), or None for a source checkout or an editable install, whose files change
    under it and are looked at one by one."""
    package = _PACKAGE
    try:
        infos = [n for n in os.listdir(package.parent) if n.startswith("cuda2hip-") and n.endswith(".dist-info")]
    except OSError:
        return None
    if len(infos) != 1:
        return None
    record = package.parent / infos[0] / "RECORD"
    try:
        st = os.stat(record)
    except OSError:
        return None
    return f"installed {infos[0]}\0{st.st_size}\0{st.st_mtime_ns}"


def _stat_line(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}\0-"
    return f"{path}\0{st.st_size}\0{st.st_mtime_ns}"


def _stats(directory: Path, suffix: str, *, recursive: bool) -> list[str]:
    """Path, size and mtime of the files under `directory` ending in `suffix` (os.walk: a third
    of what Path.rglob costs)."""
    out = []
    for top, dirs, files in os.walk(directory):
        # (the built-in rules are keyed by their content, where a key covers them)
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "builtin_rules"))
        out.extend(_stat_line(os.path.join(top, name)) for name in sorted(files)
                   if name.endswith(suffix))
        if not recursive:
            break
    return out


def key(kind: str, *parts: str | bytes) -> bytes:
    """The key of a value of `kind` derived from `parts` by this code (`code_key`)."""
    h = blake2b(code_key(), digest_size=20)
    for part in (kind, *parts):
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.digest()


# -- the database ----------------------------------------------------------------------------------

class _Store:
    """This process's connection (a forked worker opens its own), the values to write at the end
    of the run and the keys read (kept from the pruning)."""

    def __init__(self, path: Path | None):
        self.pid = os.getpid()
        self.path = path
        self.db = None
        self.broken = False
        self.pending: dict[bytes, bytes] = {}
        self.used: list[bytes] = []
        self.pruned = False

    def connect(self):
        if self.db is None and not self.broken:
            self.db = _open(self.path) if self.path is not None else None
            self.broken = self.db is None
        return self.db


_STORE: _Store | None = None
_NOTES: list[str] = []


def _here() -> _Store:
    """This process's store: a forked worker never touches its parent's connection, and a
    cache folder named anew (CUDA2HIP_CACHE_DIR, in tests) is a store of its own."""
    global _STORE
    path = location()
    if _STORE is None or _STORE.pid != os.getpid() or _STORE.path != path:
        if _STORE is not None and _STORE.pid == os.getpid():
            _flush(_STORE)
            if _STORE.db is not None:
                _STORE.db.close()
        _STORE = _Store(path)
    return _STORE


def _open(path: Path):
    import sqlite3

    base = path.parent
    for attempt in (1, 2):
        db = None
        try:
            fresh = not base.is_dir()
            if fresh:
                base.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not os.path.lexists(path):
                os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
                _remove_old(base)
            elif untrusted(path) is not None:
                _NOTES.append(f"{path}: {untrusted(path)}; not used")
                return None
            db = sqlite3.connect(path, timeout=2.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # derived data: never worth an fsync
            # A rowid table: WITHOUT ROWID reads the MB-sized rule data of every start-up about
            # twice as slowly.
            db.execute("CREATE TABLE IF NOT EXISTS store "
                       "(key BLOB PRIMARY KEY, value BLOB NOT NULL, used INTEGER NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS store_used ON store(used)")
            return db
        except sqlite3.DatabaseError as exc:
            if db is not None:
                db.close()
            # Locked or read-only: leave it to its owner. Not a database (a crash of the
            # machine mid-write): start afresh, once.
            if isinstance(exc, sqlite3.OperationalError) or attempt == 2 or not _remove(path):
                return None
        except OSError:
            return None
    return None


def _remove(path: Path) -> bool:
    try:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    except OSError:
        return False
    return True


def _remove_old(base: Path) -> None:
    import shutil

    try:
        for entry in os.scandir(base):
            if entry.name.startswith(_OLD):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
    except OSError:
        pass


CHECKSUM_SIZE = 16


def seal(value: bytes) -> bytes:
    """A value as stored by a caller that checks it: checksum + value."""
    return blake2b(value, digest_size=CHECKSUM_SIZE).digest() + value


def unseal(stored: bytes) -> bytes | None:
    """The value of a sealed one; None if the checksum does not match (damage is a miss)."""
    value = stored[CHECKSUM_SIZE:]
    if blake2b(value, digest_size=CHECKSUM_SIZE).digest() != stored[:CHECKSUM_SIZE]:
        return None
    return value


def get(k: bytes) -> bytes | None:
    """The value stored under `k` (a key from `key`), or None."""
    here = _here()
    if k in here.pending:
        return here.pending[k]
    db = here.connect()
    if db is None:
        return None
    try:
        row = db.execute("SELECT value, used FROM store WHERE key = ?", (k,)).fetchone()
    except Exception:
        here.broken, here.db = True, None
        return None
    if row is None:
        return None
    if row[1] != _today():  # marked once a day: a run that only reads writes nothing
        here.used.append(k)
    return row[0]


def put(k: bytes, value: bytes) -> None:
    """Keep `value` under `k`: written with the others at the end of the run (`flush`)."""
    _here().pending[k] = value


def unused(k: bytes) -> None:
    """A value read under `k` turned out not to hold (a result whose headers changed): it is
    not kept from the pruning on its account."""
    used = _here().used
    if used and used[-1] == k:
        used.pop()


def flush() -> None:
    """Write the values put since the last flush, mark the ones read as used today, and (once
    per process) prune the ones unused for PRUNE_AFTER_DAYS. Best effort."""
    _flush(_here())


def _flush(here: _Store) -> None:
    if not here.pending and not here.used:
        return
    db = here.connect()
    pending, used = here.pending, here.used
    here.pending, here.used = {}, []
    if db is None:
        return
    today = _today()
    try:
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO store (key, value, used) VALUES (?, ?, ?)",
                       [(k, v, today) for k, v in pending.items()])
        db.executemany("UPDATE store SET used = ? WHERE key = ? AND used <> ?", [(today, k, today) for k in used])
        if not here.pruned:
            here.pruned = True
            db.execute("DELETE FROM store WHERE used < ?", (today - PRUNE_AFTER_DAYS,))
        db.execute("COMMIT")
    except Exception:
        try:
            db.execute("ROLLBACK")
        except Exception:
            pass


def _today() -> int:
    return int(time.time() // 86400)


def notes() -> list[str]:
    """What the store said about itself (for --verbose), once."""
    out = list(_NOTES)
    _NOTES.clear()
    return out


def location() -> Path | None:
    base = cache_dir()
    return None if base is None else base / DB_NAME
