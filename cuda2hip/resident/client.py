"""The client side of the resident server: hand this `check` or `fix` to the server of this
installation when one runs, else let the caller run it here.

Protocol (one Unix stream connection per run; "check" below is either command):
  client -> server  b"C2H1" + payload length (4 bytes, little-endian), with the client's
                    stdin, stdout and stderr attached (SCM_RIGHTS); then the payload, a
                    `marshal`led dict (same interpreter on both sides: see code_key)
  server -> client  b"A" once the check runs in a fork of the server (nothing was output
                    before that: a connection that ends earlier means "run it yourself")
  client -> server  one byte per signal the client receives (SIGINT, SIGTERM, SIGHUP), which
                    the server sends to the check's process group. A signal received before
                    the "A" is held and sent after it; one the caller ignores (`nohup`, a
                    background job's SIGINT) is not forwarded, as the check run here ignores it
  server -> client  b"X" + the check's exit status (4 bytes, signed: -N when signal N ended it)

Uses the interpreter's built-in modules only (`_socket`, `_signal`, `marshal`): `socket` and
`signal` import `enum` and `selectors`, a few ms of every pre-commit call.
"""

from __future__ import annotations

import marshal
import os
import sys

from . import NO_SERVER_ENV, code_key, private_dir, runtime_dir, socket_path

MAGIC = b"C2H1"
ACCEPTED, EXITED = b"A", b"X"
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
UNIX_PATH_MAX = 108  # bytes of a socket's path, with its final NUL (Linux: unix(7))


def _stream_modes() -> list:
    """How this process's standard streams are set up, for the server's fork to set up its own
    the same way (encodings, error handlers, buffering follow the caller's terminal and locale)."""
    out = []
    for s in (sys.stdin, sys.stdout, sys.stderr):
        out.append(None if s is None else (s.encoding, s.errors, s.line_buffering, s.write_through))
    return out


def _request(argv: list[str]) -> bytes:
    mask = os.umask(0)
    os.umask(mask)
    return marshal.dumps({"kind": "run", "argv": list(argv), "argv0": sys.argv[0], "cwd": os.getcwd(),
                          "env": dict(os.environ), "umask": mask, "streams": _stream_modes()})


def wants_start(argv: list[str]) -> bool:
    """Whether the call asks for a server (`check --server`, `fix --server`), which starts one if none runs."""
    for a in argv[1:]:
        if a == "--":
            return False
        if a == "--server":
            return True
    return False


def connect(path: str):
    """A connection to the server at `path`, or None (none runs, or not this user's)."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    folder = None
    try:
        if len(os.fsencode(path)) >= UNIX_PATH_MAX:  # a deep CUDA2HIP_RUNTIME_DIR: through its fd
            folder = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
            sock.connect(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
        else:
            sock.connect(path)
        # The folder is private (checked before); the peer's uid is checked all the same.
        creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        if int.from_bytes(creds[4:8], sys.byteorder) != os.geteuid():
            sock.close()
            return None
    except OSError:
        sock.close()
        return None
    finally:
        if folder is not None:
            os.close(folder)
    return sock


def receive(sock, size: int) -> bytes:
    """`size` bytes from `sock`, or fewer when it ends or fails first."""
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except OSError:
            return data
        if not chunk:
            return data
        data += chunk
    return data


def _send(sock, argv: list[str]) -> bool:
    """Send the request to run `argv` with this process's standard streams; whether it went."""
    import _socket

    try:
        payload = _request(argv)
    except (OSError, ValueError):
        return False
    fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
    try:
        sock.sendmsg([MAGIC + len(payload).to_bytes(4, "little")],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        sock.sendall(payload)
    except OSError:
        return False
    return True


class _Signals:
    """The signals a check forwards, caught from before its request is sent: one received before
    the server accepts the check is held, not lost, and sent once it is accepted. A signal the
    caller ignores stays ignored."""

    def __init__(self, _signal):
        self._signal = _signal
        self.previous = {}
        self.held: list[int] = []
        self.sock = None
        for name in FORWARDED_SIGNALS:
            signum = getattr(_signal, name)
            handler = _signal.getsignal(signum)
            if handler is not None and handler != _signal.SIG_IGN:  # (None: not Python's to restore)
                self.previous[signum] = handler
                _signal.signal(signum, self._received)

    def _received(self, signum, frame) -> None:
        if self.sock is None:
            self.held.append(signum)
            if self.held.count(signum) > 1:  # asked twice while the server has not answered (stuck)
                self.restore()
            return
        try:
            self.sock.send(bytes([signum]))
        except OSError:
            pass

    def forward_to(self, sock) -> None:
        """From now on signals go to the server; the held ones first."""
        self.sock = sock
        held, self.held = self.held, []
        for signum in held:
            self._received(signum, None)

    def restore(self) -> None:
        """The caller's handlers again, then the signals held meanwhile, delivered to them."""
        for signum, handler in self.previous.items():
            self._signal.signal(signum, handler)
        held, self.held = self.held, []
        # SIGTERM and SIGHUP end the process at once; SIGINT raises KeyboardInterrupt, which would
        # leave the others undelivered: it goes last
        for signum in sorted(set(held), key=lambda s: s == self._signal.SIGINT):
            self._signal.raise_signal(signum)


def serve(argv: list[str]) -> int | None:
    """Run the `check` or `fix` of `argv` through the server: its exit status, or None when no server
    took it (the caller runs it; nothing was output). Starts a server for the next call when
    `argv` asks for one and none runs."""
    if os.environ.get(NO_SERVER_ENV):
        return None
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        key = code_key()
        folder = runtime_dir()
        refused = private_dir(folder) if os.path.lexists(folder) else None
        sock = None if refused is not None else connect(socket_path(key))
    except OSError:  # a closed standard stream, a removed working directory
        return None
    if sock is None:
        if wants_start(argv) and refused is None:  # (a server would refuse that folder too)
            from .control import spawn

            spawn()
        return None
    import _signal

    signals = _Signals(_signal)
    if not _send(sock, argv) or receive(sock, 1) != ACCEPTED:
        sock.close()
        signals.restore()  # the caller runs it: a signal held meanwhile reaches it now
        return None  # the server is stopping: it ran nothing
    signals.forward_to(sock)
    reply = receive(sock, 5)
    if len(reply) != 5 or reply[:1] != EXITED:
        sys.stderr.write(f"cuda2hip: error: the resident server at {socket_path(key)} ended this check "
                         f"without an exit status; run it again with {NO_SERVER_ENV}=1 to run it here\n")
        sys.stderr.flush()
        return 2
    code = int.from_bytes(reply[1:], "little", signed=True)
    if code < 0:  # ended by a signal: end the same way, as the caller would have seen it
        signals.restore()
        try:
            _signal.signal(-code, _signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        except (OSError, ValueError):
            pass
        return 128 - code
    return code
