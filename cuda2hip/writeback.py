"""Atomic file writes: a temporary file in the same directory, then rename over the target.

An interrupted run (Ctrl-C, a killed process) leaves either the old file or the new one, never a
half-written one, and no temporary file; the file's permission bits are kept. `durable` adds an
fsync before the rename, so that a crash of the machine cannot leave an empty file either: used
for files rewritten in place (the user's only copy), not for a regenerable output tree.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# tempfile and shutil are imported when a file is written: a check never pays for them.

TEMP_SUFFIX = ".cuda2hip-tmp"


def atomic_write(path: str | os.PathLike, payload: bytes, *, mode: int | None = None,
                 durable: bool = True) -> None:
    target = Path(path)
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644 & ~_umask()
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        # KeyboardInterrupt included: never leave the temporary file behind.
        _discard(tmp)
        raise


def atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy a file (content, permission bits, times) the same all-or-nothing way."""
    import shutil
    import tempfile

    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    os.close(fd)
    try:
        shutil.copyfile(source, tmp, follow_symlinks=False)
        shutil.copystat(source, tmp, follow_symlinks=False)
        os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise


def atomic_symlink(link_text: str, target: str | os.PathLike) -> None:
    """Create (or replace) the symlink `target` -> `link_text`; the link is never followed."""
    target = Path(target)
    tmp = target.parent / f".{target.name}.{os.getpid()}{TEMP_SUFFIX}"
    _discard(str(tmp))
    os.symlink(link_text, tmp)
    try:
        os.replace(tmp, target)
    except BaseException:
        _discard(str(tmp))
        raise


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
