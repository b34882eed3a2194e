"""Whose files cuda2hip trusts: what steers a run (a configuration file it finds, its caches)
must belong to the user running it and be writable by nobody else, or another user could decide
what the run writes into the user's files (SECURITY.md)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def untrusted(path: Path, *, own_group: bool = False) -> str | None:
    """Why the file or folder `path` may not be trusted (None: it may): it belongs to another
    user, or others can write it. `own_group`: writable by the group too, if that group is the
    user's own primary group (the private group of a `umask 002` system)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror or exc})"
    if st.st_uid != os.geteuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return f"other users can write it (mode {stat.S_IMODE(st.st_mode):o})"
    if st.st_mode & stat.S_IWGRP and not (own_group and st.st_gid == os.getegid()):
        return f"its group (gid {st.st_gid}) can write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None
