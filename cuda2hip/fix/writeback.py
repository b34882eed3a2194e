"""Atomic file writes: a temporary file in the same directory, then rename over the target.

An interrupted run (Ctrl-C) leaves either the old file or the new one, never a half-written one,
and no temporary file; the file's permission bits are kept. `durable` adds an fsync before the
rename, so that a crash of the machine cannot leave an empty file either: used for files
rewritten in place (the user's only copy), not for a regenerable output tree.

Rewriting a user's file in place (`rewrite`) works where the walk found it (nofollow.py: its
folder opened from the root down without following a link, the temporary file made, checked and
renamed through that folder's descriptor), keeps its owner and group (root can give the new file
any owner; another user can give it only their own, so a file they cannot give its owner back is
refused), its extended attributes and POSIX ACLs (the ACL mask with them), refuses files with
several hard links (replacing one name would leave the others with the old content), and, just
before the rename, checks that the file still holds what was read: an edit saved meanwhile is
never overwritten.

A process killed by SIGKILL cannot clean up: its temporary file stays. The name says whose it is
(`.NAME.<host>-<pid>.XXXXXXXX.cuda2hip-tmp`), so a later run (`remove_stale_temps`) removes
those of processes of this machine that no longer run; a temporary file it cannot attribute
is removed once it is a day old. Tree walks never pick them up (discover.py).
"""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache
from pathlib import Path

from ..system import nofollow
from ..system.signals import held_back
from .tempnames import TEMP_SUFFIX, is_temp_name

# A temporary file that cannot be attributed to a process of this machine is this old at least
# before a run removes it (a run's own live only as long as one write).
STALE_AFTER_SECONDS = 86400


class WriteRefused(Exception):
    """A file left untouched on purpose; `reason` says why (for the report)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


CHANGED_MEANWHILE = "changed on disk while cuda2hip worked on it; left untouched (run it again)"


def atomic_write(path: str | os.PathLike, payload: bytes, *, mode: int | None = None,
                 durable: bool = True) -> None:
    with held_back():
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


def rewrite(real: str | os.PathLike, payload: bytes, original: bytes, *, rename_to: str | None = None) -> None:
    """Replace the user's file at `real` (absolute, without links: where the walk found it),
    which held `original` when it was read, by `payload` (durable; owner, group, mode, extended
    attributes and ACLs kept). With `rename_to` (a name in the same folder), the new content goes
    there (which must not exist) and the file is removed. WriteRefused when a link now stands on
    its path, when the file has other hard links, has changed since it was read, or its owner or
    attributes cannot be kept; OSError when it cannot be written."""
    real = os.fspath(real)
    with held_back():
        try:
            folder, fd = nofollow.open_file(real)
        except FileNotFoundError:
            raise WriteRefused("no such file (removed while cuda2hip worked on it); not recreated") from None
        except nofollow.Refused as exc:
            raise WriteRefused(exc.reason) from None
        try:
            try:
                data, st = nofollow.read_open(fd)
            except nofollow.Refused as exc:
                raise WriteRefused(exc.reason) from None
            if st.st_nlink > 1:
                raise WriteRefused(f"has {st.st_nlink} hard links: replacing this name would leave the "
                                   "others with the old content; left untouched (migrate a copy, or "
                                   "break the links first)")
            if data != original:
                raise WriteRefused(CHANGED_MEANWHILE)
            name = os.path.basename(real)

            def unchanged() -> None:
                # Right before the rename: the same file (inode, size, time) under its name.
                try:
                    now = os.stat(name, dir_fd=folder, follow_symlinks=False) if folder >= 0 else os.lstat(real)
                except FileNotFoundError:
                    raise WriteRefused(CHANGED_MEANWHILE) from None
                if (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != \
                        (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
                    raise WriteRefused(CHANGED_MEANWHILE)

            _replace_in(folder, os.path.dirname(real), name, payload, stat.S_IMODE(st.st_mode), True,
                        owner=(st.st_uid, st.st_gid), attributes_of=fd, before=unchanged, new_name=rename_to)
        finally:
            os.close(fd)
            if folder >= 0:
                os.close(folder)


def write_found(real: str | os.PathLike, payload: bytes, *, mode: int, durable: bool = False,
                times: tuple[int, int] | None = None, attributes_of: int | None = None) -> None:
    """Write the file `real` (absolute, without links: in an output tree cuda2hip made) through
    its folder's descriptor, atomically; `times` (atime, mtime in ns) and the extended
    attributes of the open file `attributes_of` given to it (a copy)."""
    real = os.fspath(real)
    with held_back():
        folder = nofollow.open_folder(os.path.dirname(real)) if nofollow.SUPPORTED else -1
        try:
            _replace_in(folder, os.path.dirname(real), os.path.basename(real), payload, mode, durable,
                        times=times, attributes_of=attributes_of)
        except nofollow.Refused as exc:
            raise WriteRefused(exc.reason) from None
        finally:
            if folder >= 0:
                os.close(folder)


def _replace_in(folder: int, where: str, name: str, payload: bytes, mode: int, durable: bool, *,
                owner: tuple[int, int] | None = None, attributes_of: int | None = None, before=None,
                new_name: str | None = None, times: tuple[int, int] | None = None) -> None:
    """Write `payload` to a temporary file in the folder `folder` (a descriptor; -1: the path
    `where`), give it `mode` (and `owner`, the attributes of `attributes_of`, `times`), run
    `before()`, then rename it over `name` (or, with `new_name`, link it there and remove
    `name`). Never leaves the temporary file behind."""
    def at(n: str) -> dict:
        return {"dir_fd": folder} if folder >= 0 else {}

    def path(n: str) -> str:
        return n if folder >= 0 else os.path.join(where, n)

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = f"{temp_prefix(name)}{os.urandom(6).hex()}{TEMP_SUFFIX}"
        try:
            fd = os.open(path(tmp), flags, 0o600, **at(tmp))
            break
        except FileExistsError:
            continue
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
            if owner is not None:
                _keep_owner(fd, owner)
            if attributes_of is not None:
                _keep_attributes(attributes_of, fd)
            os.fchmod(fd, mode)  # after fchown, which may clear set-id bits, and after the ACLs
            if times is not None:
                os.utime(fd, ns=times)
        finally:
            os.close(fd)
        if before is not None:
            before()
        if new_name is not None:
            # fails if the name was taken meanwhile (a rename never overwrites)
            os.link(path(tmp), path(new_name), src_dir_fd=at(tmp).get("dir_fd"),
                    dst_dir_fd=at(new_name).get("dir_fd"), follow_symlinks=False)
            _discard(path(tmp), **at(tmp))
            os.unlink(path(name), **at(name))
        else:
            os.rename(path(tmp), path(name), src_dir_fd=at(tmp).get("dir_fd"), dst_dir_fd=at(name).get("dir_fd"))
    except BaseException:
        # KeyboardInterrupt (and signals.Terminated) included: never leave the temporary file behind.
        _discard(path(tmp), **at(tmp))
        raise


# ACLs a new file may inherit from its folder's default ACL: removed when the original has none.
_ACLS = ("system.posix_acl_access", "system.posix_acl_default")


def _keep_attributes(source: int, target: int) -> None:
    """Give the open file `target` the extended attributes of `source` (POSIX ACLs are the
    attributes system.posix_acl_*; the ACL mask is part of them), or refuse the write."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP), errno.ENOSYS):
            return  # a file system without extended attributes: nothing to keep
        raise
    for name in names:
        value = os.getxattr(source, name)
        try:
            os.setxattr(target, name, value)
        except OSError as exc:
            try:  # e.g. an SELinux label the new file already has: nothing lost
                same = os.getxattr(target, name) == value
            except OSError:
                same = False
            if not same:
                raise WriteRefused(f"its extended attribute {name} could not be kept "
                                   f"({exc.strerror or exc}); left untouched") from None
    try:
        inherited = [n for n in os.listxattr(target) if n in _ACLS and n not in names]
    except OSError:
        inherited = []
    for name in inherited:
        os.removexattr(target, name)


def temp_prefix(name: str) -> str:
    """The start of the name of a temporary file for `name` made by this process."""
    return f".{name}.{_host_tag()}-{os.getpid()}."


def _atomic_write(target: Path, payload: bytes, mode: int | None, durable: bool) -> None:
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644 & ~_umask()
    target.parent.mkdir(parents=True, exist_ok=True)
    _replace_in(-1, str(target.parent), target.name, payload, mode, durable)


def _keep_owner(fd: int, owner: tuple[int, int]) -> None:
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) == owner:
        return
    try:
        os.fchown(fd, *owner)
    except PermissionError:
        raise WriteRefused(f"owned by uid {owner[0]}, gid {owner[1]}: the rewritten file could not "
                           "keep that owner and group; left untouched (run as the owner or as root)") from None


def atomic_copy(source_real: str | os.PathLike, target_real: str | os.PathLike) -> None:
    """Copy a file found by a walk (content, permission bits, times, extended attributes) to
    `target_real` in an output tree, the same all-or-nothing way, following no link."""
    folder, fd = nofollow.open_file(os.fspath(source_real))
    try:
        data, st = nofollow.read_open(fd)
        write_found(target_real, data, mode=stat.S_IMODE(st.st_mode), times=(st.st_atime_ns, st.st_mtime_ns),
                    attributes_of=fd)
    finally:
        os.close(fd)
        if folder >= 0:
            os.close(folder)


def atomic_symlink(link_text: str, target: str | os.PathLike) -> None:
    """Create (or replace) the symlink `target` -> `link_text`; the link is never followed."""
    target = Path(target)
    tmp = target.parent / f"{temp_prefix(target.name)}link{TEMP_SUFFIX}"
    with held_back():
        _discard(str(tmp))
        os.symlink(link_text, tmp)
        try:
            os.replace(tmp, target)
        except BaseException:
            _discard(str(tmp))
            raise


def _discard(tmp: str, dir_fd: int | None = None) -> None:
    try:
        os.unlink(tmp, dir_fd=dir_fd)
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

    from ..cache.digest import blake2b

    return blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()
