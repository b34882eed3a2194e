"""Cache keys from the content of files (rule files, name tables), never from their dates alone.

A key made of size and mtime goes stale when a file is edited without changing either (an
editor or `git checkout` restoring the mtime, a file system with coarse timestamps). Hashing the
content on every start costs a few ms for the ~2 MB of rules and tables, so the hash of each
file is remembered under its full stat (size, mtime, ctime, inode), as git's index does, and a
remembered hash is trusted only for a file whose ctime was at least `RACY_S` seconds older than
the moment it was hashed: a write in the same tick as the hashing could leave the stat unchanged.
The kernel sets ctime on every write, rename and `utime`, and no user call sets it back.
"""

from __future__ import annotations

import os
import time

from .digest import blake2b

RACY_S = 2.0
# path -> (size, mtime_ns, ctime_ns, inode, digest): this process's memo, loaded once
_memo: dict[str, tuple[int, int, int, int, bytes]] | None = None
_memo_dirty = False
_used: set[str] = set()
_MEMO_MAX = 2000  # entries; beyond, only the files of this process are kept (tests' temp rules)


def _memo_key() -> bytes | None:
    from . import store

    return None if store.location() is None else store.key("content-hashes")


def _load_memo() -> dict:
    global _memo
    if _memo is None:
        _memo = {}
        key = _memo_key()
        stored = None
        if key is not None:
            from . import store

            stored = store.get(key)
        if stored is not None:
            import msgspec

            try:
                _memo = msgspec.msgpack.decode(stored, type=dict[str, tuple[int, int, int, int, bytes]])
            except (msgspec.DecodeError, msgspec.ValidationError):
                _memo = {}
    return _memo


def file_digest(path: str) -> bytes:
    """The blake2b digest of the file's content (from the memo where its stat proves it)."""
    global _memo_dirty
    memo = _load_memo()
    _used.add(path)
    st = os.stat(path)
    stat = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    known = memo.get(path)
    if known is not None and known[:4] == stat:
        return known[4]
    with open(path, "rb") as fh:
        digest = blake2b(fh.read(), digest_size=16).digest()
    if st.st_ctime_ns < (time.time() - RACY_S) * 1e9:
        memo[path] = (*stat, digest)
        _memo_dirty = True
    elif known is not None:
        del memo[path]
        _memo_dirty = True
    return digest


def fingerprint(prefix: str, paths: list[str]) -> str:
    """A key for the content of `paths` (and their names), after `prefix`."""
    h = blake2b(prefix.encode())
    for p in paths:
        h.update(f"{p}\0".encode())
        try:
            h.update(file_digest(p))
        except OSError:  # gone or unreadable: a key of its own (callers report the file)
            h.update(b"\0unreadable\0")
    save_memo()
    return h.hexdigest()[:32]


def save_memo() -> None:
    """Keep the memo in the store (written at the end of the run, store.flush)."""
    global _memo_dirty
    if not _memo_dirty:
        return
    key = _memo_key()
    _memo_dirty = False
    if key is None:
        return
    import msgspec

    from . import store

    memo = _memo if len(_memo) <= _MEMO_MAX else {p: e for p, e in _memo.items() if p in _used}
    try:
        store.put(key, msgspec.msgpack.encode(memo))
    except UnicodeEncodeError:  # a rule file whose name is not UTF-8: hashed on each run instead
        store.put(key, msgspec.msgpack.encode({p: e for p, e in memo.items() if p.isascii() or _utf8(p)}))


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
