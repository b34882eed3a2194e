"""The one on-disk store: what cuda2hip keeps between runs, in one SQLite file of the cache folder.

Every value is stored under a key of keys.py (one function of everything that decides the
value) with a checksum, and read only if the checksum holds: damage is a miss, never a wrong
value. What is kept: each file's result (findings, fixed text), facts that follow from a
header's content alone, the validated rules, the rules' pre-filter words and the name tables
read once (kinds of keys.py). A value not used for PRUNE_AFTER_DAYS goes.

The store is trusted like code (a cached fixed text is written into the user's files), so a
cache folder or store file another user owns or others can write is not used, with a warning;
one cuda2hip creates is private (0700). The folder: CUDA2HIP_CACHE_DIR, else
$XDG_CACHE_HOME/cuda2hip, else ~/.cache/cuda2hip. Best effort: a store that cannot be opened,
read or written (locked, read-only, not a database) costs speed only.

Each process opens its own connection (forked workers too: a SQLite connection does not cross
a fork); writes wait in memory and go in one transaction at `flush`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .digest import blake2b

NAME = "store-v1.sqlite3"
CHECKSUM_SIZE = 16
PRUNE_AFTER_DAYS = 30
ENV = "CUDA2HIP_CACHE_DIR"


def folder() -> Path | None:
    """The cache folder, or None where it may not be trusted (said once on stderr)."""
    base = os.environ.get(ENV)
    if base:
        path = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = Path(xdg) / "cuda2hip" if xdg else Path.home() / ".cache" / "cuda2hip"
    key = str(path)
    if key not in _TRUSTED:
        _TRUSTED[key] = _trusted_folder(path)
    return path if _TRUSTED[key] else None


# folder -> whether it may be used, decided once per process (the warning is said once)
_TRUSTED: dict[str, bool] = {}


def _trusted_folder(path: Path) -> bool:
    if not os.path.lexists(path):
        return True  # made private when first written
    reason = untrusted(path)
    if reason is None:
        return True
    print(f"cuda2hip: warning: not using the cache directory {path}: {reason}, who could put "
          "results into it that a run would write into your files; `chmod go-w` it, or set "
          f"{ENV} to a directory of your own", file=sys.stderr)
    return False


def untrusted(path: Path) -> str | None:
    from ..trust import untrusted as why

    return why(path)


def seal(value: bytes) -> bytes:
    """A stored value: checksum + value."""
    return blake2b(value, digest_size=CHECKSUM_SIZE).digest() + value


def unseal(stored: bytes) -> bytes | None:
    """The value of a stored one; None if the checksum does not match."""
    value = stored[CHECKSUM_SIZE:]
    if blake2b(value, digest_size=CHECKSUM_SIZE).digest() != stored[:CHECKSUM_SIZE]:
        return None
    return value


class Store:
    """The store of this process (`Store.open()`): get, put, flush."""

    def __init__(self, path: Path):
        self.path = path
        self._db = None
        self.broken = False
        self._pending: dict[bytes, bytes] = {}
        self._used: set[bytes] = set()
        self.damaged = 0

    _OPEN: dict[tuple[str, int], "Store"] = {}

    @classmethod
    def open(cls) -> "Store | None":
        """The store of the cache folder for this process, None where there is none to trust."""
        base = folder()
        if base is None:
            return None
        key = (str(base), os.getpid())
        got = cls._OPEN.get(key)
        if got is None:
            got = cls._OPEN[key] = cls(base / NAME)
        return got

    def _connect(self):
        if self._db is not None or self.broken:
            return self._db
        import sqlite3

        for attempt in (1, 2):
            db = None
            try:
                if not self.path.parent.is_dir():
                    self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                if os.path.lexists(self.path) and untrusted(self.path) is not None:
                    print(f"cuda2hip: warning: not using {self.path}: {untrusted(self.path)}", file=sys.stderr)
                    break
                db = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=OFF")  # a cache: never worth an fsync
                db.execute("CREATE TABLE IF NOT EXISTS store "
                           "(key BLOB PRIMARY KEY, value BLOB NOT NULL, used INTEGER NOT NULL)")
                db.execute("CREATE INDEX IF NOT EXISTS store_used ON store(used)")
                self._db = db
                return db
            except sqlite3.DatabaseError as exc:
                if db is not None:
                    db.close()
                # Locked or read-only: leave it to its owner. Not a database (a crash of the
                # machine mid-write): start afresh, once.
                if isinstance(exc, sqlite3.OperationalError) or attempt == 2 or not self._remove():
                    break
            except OSError:
                break
        self.broken = True
        return None

    def _remove(self) -> bool:
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        except OSError:
            return False
        return True

    def get(self, key: bytes) -> bytes | None:
        """The value stored under `key`, or None (none, or damaged: counted in `damaged`)."""
        pending = self._pending.get(key)
        if pending is not None:
            return pending
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT value FROM store WHERE key = ?", (key,)).fetchone()
        except Exception:
            self.broken = True
            return None
        if row is None:
            return None
        value = unseal(row[0])
        if value is None:
            self.damaged += 1
            return None
        self._used.add(key)
        return value

    def forget(self, key: bytes) -> None:
        """Do not count `key` as used (a value read but not taken)."""
        self._used.discard(key)

    def put(self, key: bytes, value: bytes) -> None:
        """Keep `value` under `key` (written at `flush`)."""
        self._pending[key] = value

    def flush(self) -> None:
        """Write what was put, mark what was read as used today, prune what was not used for long."""
        if not self._pending and not self._used:
            return
        db = self._connect()
        if db is None:
            self._pending.clear()
            return
        today = int(time.time() // 86400)
        try:
            db.execute("BEGIN")
            db.executemany("INSERT OR REPLACE INTO store (key, value, used) VALUES (?, ?, ?)",
                           [(k, seal(v), today) for k, v in self._pending.items()])
            db.executemany("UPDATE store SET used = ? WHERE key = ? AND used <> ?",
                           [(today, k, today) for k in self._used])
            db.execute("DELETE FROM store WHERE used < ?", (today - PRUNE_AFTER_DAYS,))
            db.execute("COMMIT")
        except Exception:
            try:
                db.execute("ROLLBACK")
            except Exception:
                pass
        self._pending.clear()
        self._used.clear()

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            try:
                self._db.close()
            except Exception:
                pass
            self._db = None
        self._OPEN.pop((str(self.path.parent), os.getpid()), None)
