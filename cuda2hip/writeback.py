"""Atomic file writes: a temporary file in the same directory, then rename over the target.

An interrupted run (Ctrl-C, a killed process) leaves either the old file or the new one, never a
half-written one, and no temporary file; the file's permission bits are kept. `durable` adds an
fsync before the rename, so that a crash of the machine cannot leave an empty file either: used
for files rewritten in place (the user's only copy), not for a regenerable output tree.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from contextlib import contextmanager
from pathlib import Path

# tempfile and shutil are imported when a file is written: a check never pays for them.

TEMP_SUFFIX = ".cuda2hip-tmp"


@contextmanager
def _uninterrupted():
    """Hold back Ctrl-C (SIGINT) while a file is being replaced: between creating the temporary
    file and entering the clean-up code there is no moment where an interrupt could leave it
    behind. The interrupt is raised as soon as the write is done."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def atomic_write(path: str | os.PathLike, payload: bytes, *, mode: int | None = None,
                 durable: bool = True) -> None:
    with _uninterrupted():
        _atomic_write(Path(path), payload, mode, durable)


def _atomic_write(target: Path, payload: bytes, mode: int | None, durable: bool) -> None:
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
    with _uninterrupted():
        _atomic_copy(source, target)


def _atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
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
    with _uninterrupted():
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
