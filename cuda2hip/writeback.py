"""Atomic file writes: a temporary file in the same directory, fsync, then rename over the target.

An interrupted run leaves either the old file or the new one, never a half-written one; the
file's permission bits are kept.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, payload: bytes, *, mode: int | None = None) -> None:
    target = Path(path)
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644 & ~_umask()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".cuda2hip-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        # KeyboardInterrupt included: never leave the temporary file behind.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
