"""The process's lifetime and hygiene: it ends when the editor's process (`processId`) is gone,
and nothing is ever imported from the working directory or a workspace folder. (It also ends
on `exit`, status 0 after `shutdown` else 1, and at the end of stdin: lsp/__init__.py.)"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

log = logging.getLogger("cuda2hip.lsp")
# Seconds between looks at whether the editor's process is still there.
PARENT_POLL = 2.0


def watch_parent(ls, pid: int) -> None:
    """End when the editor's process is gone (an editor killed without closing our stdin). A
    process id this process cannot see (another PID namespace: a container) is not watched."""
    if not _alive(pid):
        return

    def watch():
        while _alive(pid):
            threading.Event().wait(PARENT_POLL)
        log.error("the editor's process %s is gone; exiting", pid)
        ls.exit_now(1)

    threading.Thread(target=watch, name="cuda2hip-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def drop_from_sys_path(folders: list[Path]) -> None:
    """Nothing is ever imported from the working directory or a workspace folder."""
    unsafe = {os.getcwd(), *(str(f) for f in folders)}
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) not in unsafe]
