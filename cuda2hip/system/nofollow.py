"""Files read and written where cuda2hip found them, following no link.

A run resolves each file's path once, when it finds the file (discover.py: an absolute path
without links, `SourceFile.real`). Reading and rewriting it then open every folder of that path
from the root down with O_NOFOLLOW and the file itself with O_NOFOLLOW, and work inside the
folder through its descriptor (`dir_fd`): a folder or a file swapped for a link after the walk
makes the open fail instead of leading the read or the write elsewhere.

Every read (of a found file or of any other, `read_path`) opens without blocking, takes regular
files only and reads no more than the size the open file had: a FIFO, a device or a link to
/dev/zero is refused with a reason, never read.
"""

from __future__ import annotations

import errno
import os
import stat


class Refused(OSError):
    """A file cuda2hip leaves alone on purpose; `reason` says why (for the report)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


LINK_IN_PLACE = ("a link now stands where cuda2hip found a folder or the file itself; not followed, "
                 "left untouched")
NOT_REGULAR = "not a regular file (FIFO, socket or device); left untouched"
GREW = "changed while cuda2hip read it; left untouched (run it again)"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# O_PATH: a folder on the way needs to be searchable only, not readable
_FOLDER = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_FILE = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
SUPPORTED = bool(_NOFOLLOW) and os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd


def _link_or(exc: OSError) -> OSError:
    """The error to raise for a failed O_NOFOLLOW open: a link where a folder or file was is
    ELOOP (the last component) or ENOTDIR (a folder on the way)."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return Refused(LINK_IN_PLACE)
    return exc


def open_folder(real: str) -> int:
    """A descriptor of the folder `real` (absolute, without links), opened from the root down
    with O_NOFOLLOW at every step. Refused if a folder on the way is a link now."""
    fd = os.open("/", _FOLDER)
    try:
        for part in real.split(os.sep):
            if not part:
                continue
            try:
                nxt = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as exc:
                raise _link_or(exc) from None
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_file(real: str) -> tuple[int, int]:
    """(folder descriptor, file descriptor) of the file `real` (absolute, without links),
    opened for reading without following a link anywhere on its path."""
    if not SUPPORTED:
        return -1, os.open(real, _FILE)
    folder = open_folder(os.path.dirname(real))
    try:
        return folder, os.open(os.path.basename(real), _FILE | _NOFOLLOW, dir_fd=folder)
    except OSError as exc:
        os.close(folder)
        raise _link_or(exc) from None


def read_open(fd: int) -> tuple[bytes, os.stat_result]:
    """The content of the open file `fd` and its stat: a regular file, read up to the size it
    had when opened (a FIFO or device is refused: a read could block or never end)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        raise Refused(NOT_REGULAR)
    chunks, left = [], st.st_size + 1  # one byte more: a file growing meanwhile is noticed
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > st.st_size:
        raise Refused(GREW)
    return data, st


def read_found(real: str) -> tuple[bytes, os.stat_result]:
    """Content and stat of a file found by the walk, at its resolved path `real`."""
    folder, fd = open_file(real)
    try:
        return read_open(fd)
    finally:
        os.close(fd)
        if folder >= 0:
            os.close(folder)


def read_path(path: str | os.PathLike) -> bytes:
    """Content of a regular file named by `path` (links followed: a header an include names, a
    file a report shows), never blocking on a FIFO or reading a device."""
    fd = os.open(path, _FILE)
    try:
        return read_open(fd)[0]
    finally:
        os.close(fd)
