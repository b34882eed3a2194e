"""What the command line says and how it ends: exit codes, usage errors (`cuda2hip: error: ...`,
exit 2), output written as bytes that never ends in a traceback (a full disk, a closed pipe), and
the end of a command a signal stopped. Every other module of cli/ builds on this one."""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


class UsageFailure(Exception):
    """A usage or configuration error: `cuda2hip: error: MESSAGE`, exit 2 (click's own usage
    errors exit 2 too)."""

    exit_code = EXIT_ERROR


def fail(message: str):
    raise UsageFailure(message)


def echo(text: str | bytes, nl: bool = True, err: bool = False) -> None:
    """click.echo for the text the commands print (no styles to strip: colour is only used on a
    terminal); bytes (a diff, a migrated file) go out as they are.
    Output that cannot be written (a full disk, a closed pipe) ends the command: one error
    line, exit 2."""
    global OUTPUT_FAILED
    stream = sys.stderr if err else sys.stdout
    if not isinstance(text, bytes):
        text = (text + "\n" if nl else text).encode(stream.encoding or "utf-8", "backslashreplace")
    elif nl:
        text += b"\n"
    try:
        stream.flush()
        out = getattr(stream, "buffer", None)
        if out is None:  # a text stream only (a caller's StringIO)
            stream.write(text.decode(getattr(stream, "encoding", None) or "utf-8", "replace"))
            stream.flush()
            return
        # Bytes, in a loop: an unbuffered stream (PYTHONUNBUFFERED) may take part of them and
        # report no error when its reader goes away (a closed pipe), and the text layer would
        # drop the rest silently.
        view = memoryview(text)
        while view:
            written = out.write(view)
            if written is None:  # a non-blocking descriptor that is full: wait until it takes more
                import select

                select.select([], [out], [])
                continue
            view = view[written:]
        out.flush()
    except OSError as exc:
        OUTPUT_FAILED = True
        raise UsageFailure(f"cannot write to standard {'error' if err else 'output'}: {exc.strerror or exc}") from None


# Set once writing to the terminal (or the pipe, or the file it is redirected to) failed: the
# error is said once and nothing more is written there.
OUTPUT_FAILED = False


INTERRUPTED = "cuda2hip: interrupted; every file written is complete, the others are untouched"


def interrupted(exc: KeyboardInterrupt | None = None):
    """End a command a Ctrl-C (or SIGTERM, SIGHUP: signals.py) stopped, with the shell's status
    for the signal (the writes are atomic: what the message says holds at any point)."""
    from ..system.signals import signal_of

    signum = signal_of(exc) if exc is not None else 2
    if signum == 2:
        echo(INTERRUPTED, err=True)
    else:
        echo(INTERRUPTED.replace("interrupted", f"terminated by {exc}"), err=True)
    sys.exit(128 + signum)
