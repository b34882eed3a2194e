"""Atomic file writes: a temporary file in the same directory, then rename over the target.

An interrupted run (Ctrl-C) leaves either the old file or the new one, never a half-written one,
and no temporary file; the file's permission bits are kept. `durable` adds an fsync before the
rename, so that a crash of the machine cannot leave an empty file either: used for files
rewritten in place (the user's only copy), not for a regenerable output tree.

Rewriting a user's file in place (`rewrite`) also keeps its owner and group (root can give the
new file any owner; another user can give it only their own, so a file they cannot give its
owner back is refused), refuses files with several hard links (replacing one name would leave
the others with the old content), and, just before the rename, checks that the file still holds
what was read: an edit saved meanwhile is never overwritten.

A process killed by SIGKILL cannot clean up: its temporary file stays. The name says whose it is
(`.NAME.<host>-<pid>.XXXXXXXX.cuda2hip-tmp`), so a later run (`remove_stale_temps`) removes
those of processes of this machine that no longer run; a temporary file it cannot attribute
is removed once it is a day old. Tree walks never pick them up (discover.py).
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from .tempnames import TEMP_SUFFIX, is_temp_name

# tempfile and shutil are imported when a file is written: a check never pays for them.

# A temporary file that cannot be attributed to a process of this machine is this old at least
# before a run removes it (a run's own live only as long as one write).
STALE_AFTER_SECONDS = 86400


class WriteRefused(Exception):
    """A file left untouched on purpose; `reason` says why (for the report)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


CHANGED_MEANWHILE = "changed on disk while cuda2hip worked on it; left untouched (run it again)"


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


def report_target(path: str | os.PathLike) -> tuple[Path, bool]:
    """Where a report the user named goes: (the file, whether it is a device or a FIFO, which
    are written into, never replaced). A link to a file names that file."""
    try:
        st = os.stat(path)
    except OSError:
        return Path(path), False
    if not stat.S_ISREG(st.st_mode):
        return Path(path), True
    return Path(os.path.realpath(path)), False


def write_report(path: str | os.PathLike, payload: bytes) -> None:
    """Write a report to the file the user named: a regular file atomically (never half a
    report), a device or a FIFO (`-o /dev/stdout`, a pipe a reader waits on) as it is."""
    target, special = report_target(path)
    if not special:
        atomic_write(target, payload)
        return
    with open(target, "wb") as fh:
        fh.write(payload)


def rewrite(path: str | os.PathLike, payload: bytes, original: bytes, *,
            rename_to: str | os.PathLike | None = None) -> None:
    """Replace the user's file `path`, which held `original` when it was read, by `payload`
    (durable, owner, group and mode kept). With `rename_to`, the new content goes there (which
    must not exist) and `path` is removed. WriteRefused when the file has other hard links, has
    changed since it was read, or its owner cannot be kept; OSError when it cannot be written."""
    path = Path(path)
    with _uninterrupted():
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise WriteRefused("no such file (removed while cuda2hip worked on it); not recreated") from None
        if st.st_nlink > 1:
            raise WriteRefused(f"has {st.st_nlink} hard links: replacing this name would leave the "
                               "others with the old content; left untouched (migrate a copy, or "
                               "break the links first)")

        def unchanged() -> None:
            # Right before the rename: the same file (inode, size, time) with the same content.
            now = os.stat(path)
            if (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != \
                    (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) or _content(path) != original:
                raise WriteRefused(CHANGED_MEANWHILE)

        target = Path(rename_to) if rename_to is not None else path
        _atomic_write(target, payload, stat.S_IMODE(st.st_mode), True, owner=(st.st_uid, st.st_gid),
                      before=unchanged, no_clobber=rename_to is not None)
        if rename_to is not None:
            os.unlink(path)


def _content(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def temp_prefix(name: str) -> str:
    """The start of the name of a temporary file for `name` made by this process."""
    return f".{name}.{_host_tag()}-{os.getpid()}."


def _atomic_write(target: Path, payload: bytes, mode: int | None, durable: bool, *,
                  owner: tuple[int, int] | None = None, before=None, no_clobber: bool = False) -> None:
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644 & ~_umask()
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target.name), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
            if owner is not None:
                _keep_owner(fh.fileno(), owner)
            os.fchmod(fh.fileno(), mode)  # after fchown, which may clear set-id bits
        if before is not None:
            before()
        if no_clobber:
            os.link(tmp, target)  # fails if the name was taken meanwhile (a rename never overwrites)
            _discard(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        # KeyboardInterrupt included: never leave the temporary file behind.
        _discard(tmp)
        raise


def _keep_owner(fd: int, owner: tuple[int, int]) -> None:
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) == owner:
        return
    try:
        os.fchown(fd, *owner)
    except PermissionError:
        raise WriteRefused(f"owned by uid {owner[0]}, gid {owner[1]}: the rewritten file could not "
                           "keep that owner and group; left untouched (run as the owner or as root)") from None


def atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy a file (content, permission bits, times) the same all-or-nothing way."""
    with _uninterrupted():
        _atomic_copy(source, target)


def _atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    import shutil
    import tempfile

    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target.name), suffix=TEMP_SUFFIX)
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
    tmp = target.parent / f"{temp_prefix(target.name)}link{TEMP_SUFFIX}"
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


@lru_cache(maxsize=1)
def _temp_name():
    import re

    return re.compile(r"^\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)\.[^.]+" + re.escape(TEMP_SUFFIX) + "$")


def remove_stale_temps(directory: str | os.PathLike) -> None:
    """Remove the temporary files in `directory` that no running process will rename: those of
    processes of this machine that have ended (killed during a write), and any other one a day
    old. Best effort."""
    import time

    try:
        with os.scandir(directory) as it:
            names = [e for e in it if is_temp_name(e.name)]
    except OSError:
        return
    now = time.time()
    for entry in names:
        m = _temp_name().match(entry.name)
        if m is not None and m.group("host") == _host_tag():
            stale = not _running(int(m.group("pid")))
        else:
            try:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_SECONDS
            except OSError:
                continue
        if stale:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or not a pid at all: keep it)
    return True


@lru_cache(maxsize=1)
def _host_tag() -> str:
    import socket

    from .digest import blake2b

    return blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()
