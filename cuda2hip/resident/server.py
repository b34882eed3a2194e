"""The resident server's loop: it accepts the clients' requests (client.py has the protocol),
runs each check in a fork of itself (check_process.py), forwards the clients' signals, and
sends back each check's exit status. daemon.py starts it.

The fork is the process a plain `cuda2hip check` would have been, set up from the request: the
caller's standard streams, arguments, working directory, environment and umask; its own process
group, which gets the signals the caller receives. What the warm-up leaves behind is only what
every run computes from the package's own files (imported modules, name tables, compiled
queries): the caller's files, configuration and caches are read by the fork, as in any run.

The server stops after its idle time, on `cuda2hip server stop`, on SIGTERM, or within a minute
of a change to its code (the code key no longer matching its socket's name).
"""

from __future__ import annotations

import os
import sys
import time

from . import SERVED_COMMANDS, code_key, package_dirs
from . import check_process
from .client import ACCEPTED, EXITED, MAGIC, receive

MAX_REQUEST = 16 << 20  # arguments and environment: far less in practice
REQUEST_TIMEOUT = 10.0  # seconds for a client to send its request once connected
KEY_CHECK_SECONDS = 60.0


class ServerError(Exception):
    pass


def log(message: str) -> None:
    sys.stderr.write(time.strftime("%Y-%m-%d %H:%M:%S ") + message + "\n")
    sys.stderr.flush()


# --- the server loop -----------------------------------------------------------------------------

class _Fd:
    """A raw descriptor with a close() (pidfds), for a fork's list of what to close."""

    def __init__(self, fd: int):
        self.fd = fd

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class _Check:
    """A fork running a client's check: the client's connection (None once the check's status
    went to it), the fork's pidfd and our end of the socket pair it reports its status on."""

    __slots__ = ("conn", "pid", "pidfd", "status")

    def __init__(self, conn, pid: int, pidfd: int, status):
        self.conn, self.pid, self.pidfd, self.status = conn, pid, pidfd, status


class _Spare:
    """A fork made ahead of the next request (check_process.spare): its end of their socket
    pair, its pidfd, and whether it has primed itself."""

    __slots__ = ("sock", "pid", "pidfd", "ready")

    def __init__(self, sock, pid: int, pidfd: int):
        self.sock, self.pid, self.pidfd, self.ready = sock, pid, pidfd, False


class Server:
    def __init__(self, listener, path: str, key: str, idle_seconds: float, workspace):
        import selectors

        self.listener, self.path, self.key = listener, path, key
        self.idle_seconds = idle_seconds
        self.workspace = workspace
        self.inode = os.stat(path).st_ino  # the socket file is removed at stop only if still ours
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, ("accept", 0))
        self.running: dict[int, _Check] = {}  # by pid
        self.spare: _Spare | None = None
        self.started = time.time()
        self.last_activity = time.monotonic()
        self.served = 0
        self.from_spare = 0
        self.stopping = False

    def status(self) -> dict:
        return {"pid": os.getpid(), "started": self.started, "served": self.served,
                "from_spare": self.from_spare, "running": len(self.running),
                "spare": None if self.spare is None else ("ready" if self.spare.ready else "priming"),
                "idle_seconds": self.idle_seconds, "socket": self.path, "key": self.key,
                "python": sys.executable, "code": list(package_dirs())}

    def stop(self, reason: str) -> None:
        """Take no new check (the socket goes at once); the running ones finish."""
        if self.stopping:
            return
        self.stopping = True
        log(f"stopping: {reason}")
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        self.selector.unregister(self.listener)
        self.listener.close()
        self._drop_spare()

    def serve_forever(self) -> None:
        import signal

        signal.signal(signal.SIGTERM, lambda *_: self.stop("SIGTERM"))
        signal.signal(signal.SIGINT, lambda *_: self.stop("SIGINT"))
        self._make_spare()
        handlers = {"accept": lambda _: self._accept(), "exit": self._reap, "status": self._status_event,
                    "client": self._client_event, "spare": self._spare_event}
        next_key_check = time.monotonic() + KEY_CHECK_SECONDS
        while not (self.stopping and not self.running):
            now = time.monotonic()
            if not self.running and not self.stopping and now - self.last_activity >= self.idle_seconds:
                self.stop(f"idle for {self.idle_seconds:g} s")
                continue
            if now >= next_key_check:
                next_key_check = now + KEY_CHECK_SECONDS
                if not self.stopping and code_key() != self.key:
                    self.stop("its code or start-up environment changed")
                    continue
            timeout = min(next_key_check - now, max(0.0, self.idle_seconds - (now - self.last_activity)))
            for sel_key, _ in self.selector.select(timeout=max(0.01, timeout)):
                kind, pid = sel_key.data
                handlers[kind](pid)
        log(f"stopped after {self.served} checks")

    def _owned(self) -> list:
        """What a fork closes: the server's listener and selector, the other forks' ends."""
        owned = [self.listener, self.selector]
        for r in self.running.values():
            owned += [r.status, _Fd(r.pidfd)] + ([] if r.conn is None else [r.conn])
        if self.spare is not None:
            owned += [self.spare.sock, _Fd(self.spare.pidfd)]
        return owned

    # spare forks

    def _make_spare(self) -> None:
        import selectors
        import socket

        if self.spare is not None or self.stopping:
            return
        ours, theirs = socket.socketpair()
        owned = self._owned() + [ours]
        pid = check_process.fork(owned, lambda: check_process.spare(theirs, self.workspace))
        theirs.close()
        self.spare = _Spare(ours, pid, os.pidfd_open(pid))
        self.selector.register(ours, selectors.EVENT_READ, ("spare", pid))

    def _spare_event(self, pid: int) -> None:
        """The spare says it is ready, or its end closed (it died: a new one is made)."""
        sp = self.spare
        if sp is None or sp.pid != pid:
            return
        try:
            data = sp.sock.recv(16)
        except OSError:
            data = b""
        if data == check_process.SPARE_READY:
            sp.ready = True
            self.selector.unregister(sp.sock)
            return
        log(f"the spare fork {pid} ended before it was used")
        self._drop_spare()
        self._make_spare()

    def _drop_spare(self) -> None:
        import signal

        sp, self.spare = self.spare, None
        if sp is None:
            return
        try:
            self.selector.unregister(sp.sock)
        except (KeyError, ValueError):
            pass
        sp.sock.close()
        try:
            os.kill(sp.pid, signal.SIGTERM)  # it runs nothing of a user's yet
        except OSError:
            pass
        os.waitpid(sp.pid, 0)
        os.close(sp.pidfd)

    # requests

    def _accept(self) -> None:
        import marshal
        import socket

        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        fds: list[int] = []
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(creds[4:8], sys.byteorder) != os.geteuid():
                raise ServerError("a client of another user")
            conn.settimeout(REQUEST_TIMEOUT)
            head, fds, _, _ = socket.recv_fds(conn, 8, 3)
            if len(head) < 8 or head[:4] != MAGIC:
                raise ServerError("not a cuda2hip request")
            size = int.from_bytes(head[4:8], "little")
            if size > MAX_REQUEST:
                raise ServerError(f"a request of {size} bytes")
            payload = receive(conn, size)
            if len(payload) < size:
                raise ServerError("a request cut short (or not sent in time)")
            request = marshal.loads(payload)
            kind = request.get("kind")
            if kind == "run":
                if self.stopping or len(fds) != 3 or (request.get("argv") or [None])[0] not in SERVED_COMMANDS:
                    raise ServerError("a request the server does not run")
                conn.settimeout(None)
                self._run(conn, request, payload, fds)
            elif kind in ("status", "stop"):
                conn.sendall(marshal.dumps(self.status()))
                conn.close()
                if kind == "stop":
                    self.stop("asked to (cuda2hip server stop)")
            else:
                raise ServerError(f"a request of kind {kind!r}")
        except (OSError, ValueError, EOFError, TypeError, ServerError) as exc:
            log(f"refused a connection: {exc}")
            conn.close()
        finally:
            for fd in fds:  # the fork has them now (or nobody needs them)
                os.close(fd)

    def _run(self, conn, request: dict, payload: bytes, fds: list[int]) -> None:
        """Run the request in the spare when it is ready (then make the next spare once no
        check runs), else in a fork made now."""
        import selectors

        sp = self.spare
        if sp is not None and sp.ready:
            try:
                check_process.send_request(sp.sock, payload, fds)
            except OSError:  # the spare died after it was ready: a fork made now runs it
                log(f"the spare fork {sp.pid} could not take a request")
                self._drop_spare()
                sp = None
        if sp is not None and sp.ready:
            self.spare = None
            pid, pidfd, status = sp.pid, sp.pidfd, sp.sock
            self.from_spare += 1
        else:
            import socket

            status, theirs = socket.socketpair()
            pid = check_process.fork(self._owned() + [conn, status],
                                     lambda: check_process.run_check(request, fds, theirs))
            theirs.close()
            pidfd = os.pidfd_open(pid)
        self.served += 1
        self.last_activity = time.monotonic()  # checks only: a `server status` keeps no server up
        self.running[pid] = _Check(conn, pid, pidfd, status)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
        self.selector.register(status, selectors.EVENT_READ, ("status", pid))
        self.selector.register(conn, selectors.EVENT_READ, ("client", pid))
        try:
            conn.sendall(ACCEPTED)
        except OSError:
            pass

    def _client_event(self, pid: int) -> None:
        import signal

        r = self.running.get(pid)
        if r is None or r.conn is None:
            return
        try:
            data = r.conn.recv(64)
        except OSError:
            data = b""
        if not data:  # the client is gone (killed): so is its check
            self.selector.unregister(r.conn)
            signums = [signal.SIGTERM]
        else:
            signums = [s for s in data if s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
        for s in signums:
            try:
                os.killpg(pid, s)
            except OSError:
                pass

    def _status_event(self, pid: int) -> None:
        """The check reports its exit status (before it exits): the client gets it now."""
        r = self.running.get(pid)
        if r is None:
            return
        try:
            data = r.status.recv(16)
        except OSError:
            data = b""
        self.selector.unregister(r.status)
        if len(data) == 5 and data[:1] == check_process.STATUS:
            self._answer(r, int.from_bytes(data[1:], "little", signed=True))
        # else its end closed unreported (it died): the status comes from reaping it

    def _answer(self, r: _Check, code: int) -> None:
        """Send the client the check's exit status and let it go."""
        if r.conn is None:
            return
        try:
            self.selector.unregister(r.conn)
        except (KeyError, ValueError):
            pass
        try:
            r.conn.sendall(EXITED + code.to_bytes(4, "little", signed=True))
        except OSError:
            pass
        r.conn.close()
        r.conn = None

    def _reap(self, pid: int) -> None:
        r = self.running.pop(pid)
        self.selector.unregister(r.pidfd)
        try:
            self.selector.unregister(r.status)
        except (KeyError, ValueError):
            pass
        os.close(r.pidfd)
        r.status.close()
        _, status = os.waitpid(pid, 0)
        self._answer(r, os.waitstatus_to_exitcode(status))  # unless it reported already
        self.last_activity = time.monotonic()
        if not self.running:
            self._make_spare()  # after the check: a spare priming meanwhile would slow it
