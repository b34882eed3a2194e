"""The resident server process, `python -m cuda2hip.resident.daemon` (started by `cuda2hip server
start` or `check --server`): takes this installation's key, private folder, log and start lock,
warms up (warm_up.py), listens, and serves (server.py) until it stops.
"""

from __future__ import annotations

import os
import sys
import time

from . import DEFAULT_IDLE_MINUTES, code_key, package_dirs, private_dir, runtime_dir, socket_path
from .server import Server, ServerError, log

# Written to the ready pipe of whoever started the server: "ready PID" or "running PID".
READY, RUNNING = "ready", "running"


def ensure_runtime_dir() -> str:
    folder = runtime_dir()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ServerError(f"cannot create {folder}: {exc.strerror or exc}") from None
    reason = private_dir(folder)
    if reason is not None:
        raise ServerError(f"not using {folder} for the server's socket: it {reason}; "
                          "`chmod 700` it, or set CUDA2HIP_RUNTIME_DIR to a folder of your own")
    return folder


def _live(path: str) -> int | None:
    """The pid of the server listening at `path`, if one does."""
    from .control import ask

    got = ask(path, "status")
    return None if got is None else got["pid"]


STALE_SECONDS = 7 * 86400


def remove_stale(folder: str, key: str) -> None:
    """Remove the logs and start locks of servers of other code (an earlier version, a checkout
    since edited) that have not run for a week: each change of the code leaves a pair behind."""
    now = time.time()
    with os.scandir(folder) as entries:
        names = {e.name: e for e in entries}
    for name, e in names.items():
        stem, dot, ext = name.rpartition(".")
        if not stem.startswith("server-") or stem == f"server-{key}" or ext not in ("log", "lock"):
            continue
        try:
            if f"{stem}.sock" in names or now - e.stat().st_mtime < STALE_SECONDS:
                continue
            os.unlink(e.path)
        except OSError:
            pass


def main(argv: list[str] | None = None) -> None:
    import argparse
    import fcntl
    import socket

    ap = argparse.ArgumentParser(prog="python -m cuda2hip.resident.daemon")
    ap.add_argument("--idle-minutes", type=float, default=DEFAULT_IDLE_MINUTES)
    ap.add_argument("--ready-fd", type=int, default=None,
                    help="write 'ready PID' (or 'running PID': another server runs) there, then close it")
    args = ap.parse_args(argv)

    def ready(word: str, pid: int) -> None:
        if args.ready_fd is not None:
            os.write(args.ready_fd, f"{word} {pid}\n".encode())
            os.close(args.ready_fd)
            args.ready_fd = None

    key = code_key()
    remove_stale(ensure_runtime_dir(), key)
    path = socket_path(key)
    base = path[: -len(".sock")]
    # Its own log (the folder is private): what a start-up failure or a stop was about.
    log_fd = os.open(base + ".log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(null)
    os.close(log_fd)
    # One start at a time per installation: a second one waits, then finds the first running.
    lock = open(base + ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    pid = _live(path)
    if pid is not None:
        ready(RUNNING, pid)
        return
    log(f"starting (pid {os.getpid()}, {sys.executable}, code in {', '.join(package_dirs())})")
    import shutil
    import tempfile

    from .warm_up import Workspace

    t0 = time.monotonic()
    workspace = Workspace(tempfile.mkdtemp(prefix="cuda2hip-server-"))
    try:
        workspace.warm_up()
        import gc

        gc.collect()
        gc.freeze()  # the forks never scan the warmed-up objects
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Named from inside the folder: a socket's path has at most 107 bytes (unix(7)), a
        # CUDA2HIP_RUNTIME_DIR may have more. (The forks set their own working directory.)
        os.chdir(os.path.dirname(path))
        fresh = f"{os.path.basename(base)}.{os.getpid()}.new"
        try:
            os.unlink(fresh)
        except FileNotFoundError:
            pass
        listener.bind(fresh)
        listener.listen(64)
        os.replace(fresh, os.path.basename(path))  # a dead server's socket is replaced, never reused
        server = Server(listener, path, key, args.idle_minutes * 60, workspace)
        log(f"ready in {time.monotonic() - t0:.1f} s at {path}")
        ready(READY, os.getpid())
        lock.close()
        server.serve_forever()
    finally:
        shutil.rmtree(workspace.folder, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except ServerError as exc:  # to the log, or to `server start` before the log is open
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
