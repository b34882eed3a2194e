"""The fork of the server that runs one check (or fix): it becomes the caller's `cuda2hip check` (the
caller's standard streams, arguments, working directory, environment, umask; a process group of
its own, which gets the signals the caller receives), runs it, and exits with its status.

A spare fork is made ahead of the next request: it primes itself (warm_up.Workspace.prime),
says so, and waits for the request on its own socket pair with the server.

A check reports its exit status on its socket pair with the server once its output is
flushed, before it exits: a fork of a server holding ~80 MB takes ~4 ms to tear down, which
the caller (and pre-commit) need not wait for. A check that dies without reporting (a signal)
is reported by the server when it reaps it.
"""

from __future__ import annotations

import os
import sys

SPARE_READY = b"R"
STATUS = b"X"  # + the exit status (4 bytes, little-endian, signed), as the client gets it


def _stream(fd: int, writing: bool, mode):
    import io

    if mode is None:
        return None
    encoding, errors, line_buffering, write_through = mode
    raw = io.FileIO(fd, "w" if writing else "r", closefd=False)
    buffered = io.BufferedWriter(raw) if writing else io.BufferedReader(raw)
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=line_buffering,
                            write_through=write_through)


def run_check(request: dict, fds: list[int], status) -> None:
    """Become the caller's `cuda2hip check`, run it, report its status on the socket `status`
    and exit with it (never returns)."""
    import signal

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    streams = request["streams"]
    sys.stdin = sys.__stdin__ = _stream(0, False, streams[0])
    sys.stdout = sys.__stdout__ = _stream(1, True, streams[1])
    sys.stderr = sys.__stderr__ = _stream(2, True, streams[2])
    sys.argv = [request["argv0"], *request["argv"]]
    from ..cli.commands import entry

    def report(code: int) -> None:
        try:
            status.sendall(STATUS + code.to_bytes(4, "little", signed=True))
        except (OSError, OverflowError):  # the server went away: nobody waits for the status
            pass

    # SIGINT has been blocked since the fork (see `fork`): one forwarded at once waits there and
    # is delivered in `entry`, which ends the check as a Ctrl-C ends it when run here.
    entry(report, on_start=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}))


def fork(owned: list, then) -> int:
    """Fork; the child closes what the server `owned` (its sockets and descriptors are not the
    check's), leads a process group of its own, runs `then()` and exits (1 on an error, with
    its traceback on the stderr it has then). Returns the child's pid.

    The child never runs the server's signal handlers (they stop the server: its socket would
    go): SIGTERM and SIGHUP get their default action, and SIGINT raises KeyboardInterrupt but
    stays blocked until a check's `entry` lets it in, so that a Ctrl-C forwarded at any
    moment ends the check with "interrupted" and 130, as it does run here."""
    import signal

    caught = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, caught)
    try:
        pid = os.fork()
    except BaseException:  # (EAGAIN, ENOMEM): the server goes on, its signals with it
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGHUP})
            os.setpgid(0, 0)
            for thing in owned:
                thing.close()
            then()
        except BaseException:
            try:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(1)
        os._exit(0)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    try:
        os.setpgid(pid, pid)  # on both sides, so that a signal forwarded at once reaches the group
    except OSError:
        pass
    return pid


def send_request(sock, payload: bytes, fds: list[int]) -> None:
    """Hand a request (the client's, as received) to a spare fork."""
    import socket

    socket.send_fds(sock, [len(payload).to_bytes(4, "little")], fds)
    sock.sendall(payload)


def spare(sock, workspace) -> None:
    """A spare fork: prime, say so, wait for a request and run it; exit when the server closes
    the pair unused (it stops)."""
    import marshal
    import socket

    workspace.prime()
    try:
        sock.sendall(SPARE_READY)
        head, fds, _, _ = socket.recv_fds(sock, 4, 3)
    except OSError:  # the server went away
        os._exit(0)
    if len(head) < 4 or len(fds) != 3:
        os._exit(0)
    from .client import receive

    size = int.from_bytes(head, "little")
    payload = receive(sock, size)
    if len(payload) < size:
        os._exit(0)
    run_check(marshal.loads(payload), fds, sock)
