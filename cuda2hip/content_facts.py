"""Facts that follow from a file's content alone (the names a local header defines), kept on
disk between runs: a pre-commit call on a file reads the project headers it includes, and
parsing them again on every call costs more than checking the file itself (llama.cpp's
`common.cuh` chain: ~250 ms a call).

One small file per (kind, content digest), under `facts-<code key>/` in the cache folder; the
code key covers the package's code and the parser binaries (run_scope.code_stats), so a fact
is never read by other code than the code that derived it. Used only by runs that use the
result cache (`configure`): `--no-cache` runs derive everything afresh. Best effort: an
unreadable, damaged or untrusted store only costs the time of deriving the fact.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .digest import blake2b

# Entries not read for this long go, and folders of other code not used for this long.
PRUNE_AFTER_DAYS = 30
OTHER_CODE_AFTER_DAYS = 7

_enabled = False
_folder: Path | None = None
_pruned = False


def configure(use_cache: bool) -> None:
    """Whether this run reads and writes the store (`Settings.use_cache`)."""
    global _enabled
    _enabled = use_cache


def _store() -> Path | None:
    global _folder
    if not _enabled:
        return None
    if _folder is None:
        from .run_scope import code_stats
        from .rulebook.loader import cache_dir

        base = cache_dir()
        if base is None:
            return None
        key = blake2b("\n".join(code_stats()).encode(), digest_size=12).hexdigest()
        _folder = base / f"facts-{key}"
    return _folder


def _path(kind: str, data: bytes) -> Path | None:
    folder = _store()
    if folder is None:
        return None
    return folder / f"{kind}-{blake2b(data, digest_size=16).hexdigest()}"


def lookup(kind: str, data: bytes) -> bytes | None:
    """The stored fact of `kind` for the content `data`, or None."""
    path = _path(kind, data)
    if path is None:
        return None
    from .result_cache import unseal
    from .trust import untrusted

    try:
        with open(path, "rb") as fh:
            stored = fh.read()
        if untrusted(path.parent) is not None:
            return None
        os.utime(path)  # read: kept by the pruning
    except OSError:
        return None
    return unseal(stored)


def store(kind: str, data: bytes, payload: bytes) -> None:
    """Keep `payload` as the fact of `kind` for the content `data`."""
    path = _path(kind, data)
    if path is None:
        return
    from .result_cache import seal
    from .rulebook.loader import make_cache_dir, write_cache_file
    from .trust import untrusted

    try:
        make_cache_dir(path.parent)
    except OSError:
        return
    if untrusted(path.parent) is not None:
        return
    write_cache_file(path, seal(payload))
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Once per process that stores something: entries not read for PRUNE_AFTER_DAYS, and the
    folders of other code (an upgrade, an edited checkout) not used for OTHER_CODE_AFTER_DAYS."""
    global _pruned
    if _pruned:
        return
    _pruned = True
    import shutil

    now = time.time()
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                if e.is_file(follow_symlinks=False) and now - e.stat().st_mtime > PRUNE_AFTER_DAYS * 86400:
                    os.unlink(e.path)
        with os.scandir(folder.parent) as entries:
            for e in entries:
                if e.name.startswith("facts-") and e.path != str(folder) and e.is_dir(follow_symlinks=False) \
                        and now - e.stat().st_mtime > OTHER_CODE_AFTER_DAYS * 86400:
                    shutil.rmtree(e.path, ignore_errors=True)
    except OSError:
        pass
