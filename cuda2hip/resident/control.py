"""`cuda2hip server start|stop|status`, and the background start of `check --server`."""

from __future__ import annotations

import os
import sys

from . import DEFAULT_IDLE_MINUTES, code_key, private_dir, runtime_dir, socket_path

START_TIMEOUT = 120.0  # seconds for a server to warm up and listen


def ask(path: str, kind: str) -> dict | None:
    """The server's answer to a `status` or `stop` request, or None when none answers."""
    import marshal

    from .client import MAGIC, connect

    sock = connect(path)
    if sock is None:
        return None
    try:
        sock.settimeout(10.0)
        payload = marshal.dumps({"kind": kind})
        sock.sendall(MAGIC + len(payload).to_bytes(4, "little") + payload)
        data = b""
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        return marshal.loads(data) if data else None
    except (OSError, ValueError, EOFError):
        return None
    finally:
        sock.close()


def _command(idle_minutes: float, ready_fd: int | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "cuda2hip.resident.daemon", "--idle-minutes", f"{idle_minutes:g}"]
    if ready_fd is not None:
        cmd += ["--ready-fd", str(ready_fd)]
    return cmd


def spawn(idle_minutes: float = DEFAULT_IDLE_MINUTES) -> None:
    """Start a server in the background and return at once (`check --server`, none running)."""
    import subprocess

    try:
        subprocess.Popen(_command(idle_minutes), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        pass  # no server: this call and the next run in-process, as without --server


def start(idle_minutes: float) -> tuple[bool, str]:
    """Start a server and wait until it listens: (ok, what to tell the user)."""
    import selectors
    import subprocess

    read, write = os.pipe()
    try:
        proc = subprocess.Popen(_command(idle_minutes, write), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                pass_fds=(write,))
    except OSError as exc:
        os.close(read)
        os.close(write)
        return False, f"cannot start the server: {exc.strerror or exc}"
    os.close(write)
    answer = b""
    with selectors.DefaultSelector() as sel:
        sel.register(read, selectors.EVENT_READ)
        while sel.select(timeout=START_TIMEOUT):
            chunk = os.read(read, 256)
            if not chunk:
                break
            answer += chunk
    os.close(read)
    word, _, pid = answer.decode().strip().partition(" ")
    path = socket_path(code_key())
    if word == "ready":
        return True, (f"started the server (pid {pid}); `cuda2hip check` runs through it until it has been "
                      f"idle {idle_minutes:g} min (`cuda2hip server stop` ends it)")
    if word == "running":
        return True, f"a server runs already for this installation (pid {pid})"
    try:  # it failed (its ready pipe closed unanswered) or hangs in its warm-up
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    errors = proc.stderr.read().decode(errors="replace").strip() if proc.returncode is not None else ""
    log = path[: -len(".sock")] + ".log"
    return False, (f"the server did not start: {errors or 'no answer'}"
                   + (f" (its log: {log})" if os.path.exists(log) else ""))


def status() -> tuple[dict | None, str]:
    """The server's status (None: none runs) and where its socket is (or why it cannot be)."""
    folder = runtime_dir()
    reason = private_dir(folder) if os.path.lexists(folder) else None
    if reason is not None:
        return None, f"{folder} {reason}: no server can listen there"
    path = socket_path(code_key())
    return ask(path, "status"), f"its socket would be {path}"


def stop() -> dict | None:
    """Ask this installation's server to stop; its answer (None: none ran)."""
    folder = runtime_dir()
    if os.path.lexists(folder) and private_dir(folder) is not None:
        return None
    return ask(socket_path(code_key()), "stop")
