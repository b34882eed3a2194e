"""Signals and a check run through the resident server: a Ctrl-C, a SIGTERM or a hang-up the
caller receives ends its check as it ends a check run in the caller's own process, whenever it
comes, and a signal the caller ignores (`nohup`, a background job's SIGINT) stays ignored."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from resident_support import make_big_tree, run_cuda2hip, server_env, server_status, socket_path_of, wait_until  # noqa: F401


def _as_in_a_terminal(**dispositions):
    """A preexec_fn giving the caller the signal dispositions of a terminal's foreground job
    (SIGINT as default: a test run in the background of a non-interactive shell inherits it
    ignored), with `dispositions` over them."""
    def preexec():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for name, handler in dispositions.items():
            signal.signal(getattr(signal, name), handler)
    return preexec


def test_ctrl_c_reaches_the_check_and_ends_it_as_in_process(server_env, tmp_path):
    tree = make_big_tree(tmp_path / "tree")
    assert run_cuda2hip(["server", "start"], server_env, tmp_path).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "check", "--no-cache", "-j", "1", str(tree)],
                            env=server_env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_as_in_a_terminal())
    assert wait_until(lambda: " 1 running" in (server_status(server_env, tmp_path) or ""))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, (proc.returncode, err)
    assert wait_until(lambda: " 0 running" in (server_status(server_env, tmp_path) or ""), 10)


def test_a_killed_caller_takes_its_check_with_it(server_env, tmp_path):
    tree = make_big_tree(tmp_path / "tree")
    assert run_cuda2hip(["server", "start"], server_env, tmp_path).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "cuda2hip", "check", "--no-cache", "-j", "1", str(tree)],
                            env=server_env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=_as_in_a_terminal())
    assert wait_until(lambda: " 1 running" in (server_status(server_env, tmp_path) or ""))
    proc.kill()
    proc.wait()
    assert wait_until(lambda: " 0 running" in (server_status(server_env, tmp_path) or ""), 10)


def test_a_ctrl_c_forwarded_the_moment_the_check_starts_ends_it_as_in_process(server_env, tmp_path):
    """The earliest a caller's Ctrl-C can reach its check: sent as the server accepts it, while the
    server's fork is still becoming the caller's check. It ended the fork by the signal (no
    "interrupted", not 130), or as a traceback on the server's stderr and exit status 1. Both
    kinds of fork: the one made ahead, and one made for the check while another check runs.
    Each check is of a big tree, so that it cannot end before the signal comes, however late the
    machine's load lets the caller send it."""
    tree = make_big_tree(tmp_path / "tree")
    assert run_cuda2hip(["server", "start"], server_env, tmp_path).returncode == 0
    caller = ("import sys\n"
              "from cuda2hip.resident.client import ACCEPTED, _send, connect, receive\n"
              "sock = connect(sys.argv[1])\n"
              "assert _send(sock, sys.argv[2:]) and receive(sock, 1) == ACCEPTED\n"
              "sock.send(bytes([2]))  # SIGINT, as the client forwards it\n"
              "reply = receive(sock, 5)\n"
              "sys.exit(int.from_bytes(reply[1:], 'little', signed=True) if len(reply) == 5 else 99)\n")
    path = socket_path_of(server_env)

    def interrupted_at_once():
        r = subprocess.run([sys.executable, "-c", caller, path, "check", "--no-cache", "-j", "1", str(tree)],
                           env=server_env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, (r.returncode, r.stderr)

    def status():
        return server_status(server_env, tmp_path) or ""

    assert wait_until(lambda: "next fork ready" in status())
    interrupted_at_once()
    assert "(1 by a fork made ahead)" in status()
    assert wait_until(lambda: "next fork ready" in status())
    busy = subprocess.Popen([sys.executable, "-m", "cuda2hip", "check", "--no-cache", "-j", "1", str(tree)],
                            env=server_env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=_as_in_a_terminal())
    try:
        assert wait_until(lambda: " 1 running" in status())
        assert "no fork made ahead" in status()  # (none is made while a check runs)
        interrupted_at_once()
        assert "(2 by a fork made ahead)" in status()
    finally:
        busy.kill()
        busy.wait()


class _FakeServer:
    """A socket where a server of this code listens, answering one check by `script(conn, pid)`
    (the caller's connection and pid): what the caller does is seen apart from any real check."""

    def __init__(self, path: str, script):
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(path)
        self.listener.listen()  # the caller may connect now; it is accepted once `answer` runs
        self.script, self.error = script, None
        self.thread = threading.Thread(target=self._serve)

    def _serve(self):
        try:
            self.listener.settimeout(60)
            conn, _ = self.listener.accept()
            with conn:
                conn.settimeout(30)
                pid = int.from_bytes(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)[:4], sys.byteorder)
                head, fds, _, _ = socket.recv_fds(conn, 8, 3)
                for fd in fds:
                    os.close(fd)
                size, payload = int.from_bytes(head[4:8], "little"), b""
                while len(payload) < size:
                    chunk = conn.recv(size - len(payload))
                    assert chunk, "the request was cut short"
                    payload += chunk
                self.script(conn, pid)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.listener.close()

    def answer(self, proc: subprocess.Popen) -> tuple[int, str]:
        """Serve the caller `proc` (started after the socket listens: its preexec_fn runs before
        any thread of ours does); its exit status and stderr."""
        self.thread.start()
        _, err = proc.communicate(timeout=60)
        self.thread.join(60)
        assert self.error is None, self.error
        return proc.returncode, err


def _caller(server_env, tmp_path, **dispositions):
    return subprocess.Popen([sys.executable, "-m", "cuda2hip", "check", "k.cu"], env=server_env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_as_in_a_terminal(**dispositions))


def _signal_and_wait(pid: int, signum: int) -> None:
    """Send `signum` to `pid` and wait until the process has taken it (no longer pending, as
    /proc shows): a fixed sleep would be too short on a loaded machine, and two signals of one
    kind sent before the first is taken count as one."""
    os.kill(pid, signum)
    bit = 1 << (signum - 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        except FileNotFoundError:  # it ended
            return
        if not any(int(fields[k], 16) & bit for k in ("SigPnd", "ShdPnd")):
            time.sleep(0.05)  # (the interpreter runs its handler right after)
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not take signal {signum}")


def _exited(code: int) -> bytes:
    return b"X" + code.to_bytes(4, "little", signed=True)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_a_signal_before_the_server_accepts_the_check_is_held_for_it(server_env, tmp_path, signum, status):
    """The window the CI caught: the server counts the check as running, but the caller has not
    read the acceptance yet. The caller's Ctrl-C was lost there (ignored by a background job) or
    ended the caller with a traceback, leaving the check to run."""
    forwarded = []

    def script(conn, pid):
        _signal_and_wait(pid, signum)  # (unheld, it would have ended the caller by now)
        conn.sendall(b"A")
        forwarded.append(conn.recv(1))
        conn.sendall(_exited(status))  # the check ended as the signal ends it

    server = _FakeServer(socket_path_of(server_env), script)
    returncode, err = server.answer(_caller(server_env, tmp_path))
    assert forwarded == [bytes([signum])]
    assert returncode == status and "Traceback" not in err, (returncode, err)


def test_a_ctrl_c_held_for_a_server_that_then_refuses_the_check_ends_the_command(server_env, tmp_path):
    """A server that stops instead of accepting: the caller would run the check itself, but the
    user asked it to stop."""
    def script(conn, pid):
        _signal_and_wait(pid, signal.SIGINT)

    server = _FakeServer(socket_path_of(server_env), script)
    (tmp_path / "k.cu").write_text("__global__ void k() { __syncthreads(); }\n")
    returncode, err = server.answer(_caller(server_env, tmp_path))
    assert returncode == 130 and "interrupted" in err and "Traceback" not in err, (returncode, err)


def test_a_second_ctrl_c_frees_a_caller_its_server_never_answers(server_env, tmp_path):
    def script(conn, pid):
        _signal_and_wait(pid, signal.SIGINT)
        os.kill(pid, signal.SIGINT)
        conn.settimeout(30)
        assert conn.recv(1) == b""  # the caller went away without waiting for an answer

    server = _FakeServer(socket_path_of(server_env), script)
    returncode, err = server.answer(_caller(server_env, tmp_path))
    assert returncode == 130 and "interrupted" in err and "Traceback" not in err, (returncode, err)


def test_a_signal_the_caller_ignores_is_not_forwarded(server_env, tmp_path):
    """`nohup cuda2hip check ...`: a hang-up forwarded would end the check that nohup keeps alive."""
    forwarded = []

    def script(conn, pid):
        conn.sendall(b"A")
        os.kill(pid, signal.SIGHUP)
        os.kill(pid, signal.SIGINT)  # a marker: what the caller forwards comes in order
        forwarded.append(conn.recv(1))
        conn.sendall(_exited(130))

    server = _FakeServer(socket_path_of(server_env), script)
    returncode, err = server.answer(_caller(server_env, tmp_path, SIGHUP=signal.SIG_IGN))
    assert forwarded == [bytes([signal.SIGINT])] and returncode == 130, (forwarded, returncode, err)


@pytest.mark.parametrize("args", [["check", "."], ["check", "-vj1", "."]], ids=["options", "click"])
def test_a_ctrl_c_while_the_check_sets_up_ends_it_as_interrupted(args):
    """In the caller's own process too: a Ctrl-C before the files are read (the settings, the
    rules) ended with a traceback, not with "interrupted" and 130; and a command line that only
    click parses (`-vj1`) ended a Ctrl-C with click's "Aborted!" and 1."""
    code = ("import cuda2hip.cli.commands as cli\n"
            "def settings(opts):\n"
            "    raise KeyboardInterrupt\n"
            "cli._settings = settings\n"
            "cli.entry()\n")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, (r.returncode, r.stderr)
