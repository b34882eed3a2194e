"""How a run ends on a signal: Ctrl-C (SIGINT), SIGTERM (a CI job's timeout, `kill`) and SIGHUP
(a closed terminal) all end it the way Ctrl-C does: no file is left half-written (writes hold
the signals back, `held_back`), worker processes stop after their current file, and the command
exits with the shell's status for the signal, 128 + its number. A signal the caller set to be
ignored (`nohup`) stays ignored, in the workers too.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the run is, like the KeyboardInterrupt of a Ctrl-C (and
    handled by the same code: a KeyboardInterrupt without `signum` is SIGINT's)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(exc: KeyboardInterrupt) -> int:
    return getattr(exc, "signum", signal.SIGINT)


def _raise(signum, frame) -> None:
    # Once: the run is ending already, and a second signal must not cut its clean-up short.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


def install() -> None:
    """In the command's process: SIGTERM and SIGHUP end the run as Ctrl-C does (unless ignored)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)


def in_worker(stop) -> None:
    """In a worker process: the parent decides what a Ctrl-C stops; SIGTERM and SIGHUP (unless
    ignored) set `stop` (a multiprocessing Event the parent sets too), and the worker ends its
    share after the file it is on (runner._work)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def note(signum, frame) -> None:
        global RECEIVED
        RECEIVED = signum
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, note)


# The ending signal a worker received (in_worker), reported to the parent with its results.
RECEIVED: int | None = None


@contextmanager
def held_back():
    """Hold back the ending signals while a file is being replaced: between creating the
    temporary file and entering the clean-up code there is no moment where a signal could leave
    it behind. The signal takes effect as soon as the write is done."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
