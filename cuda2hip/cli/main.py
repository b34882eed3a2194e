"""The command's process: `main` parses the command line (click, group.py) and runs it; `entry`
ends the process with its exit status, the output flushed, what the run put in the store written,
without tearing the interpreter down."""

from __future__ import annotations

import gc
import sys

from . import output
from .output import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, UsageFailure, echo, interrupted

# Start-up (imports, rules, name tables) allocates tens of thousands of objects that all stay
# alive: with the default first-generation threshold (700) the collector runs ~50 times during a
# pre-commit call and frees next to nothing, ~6 ms of ~110. Garbage cycles are still collected.
gc.set_threshold(100_000, 10, 10)


def main(args: list[str] | None = None) -> None:
    """Run the command line `args` (default: sys.argv[1:]); ends with SystemExit (or the
    KeyboardInterrupt of a Ctrl-C, which `entry` reports)."""
    argv = sys.argv[1:] if args is None else list(args)
    if args is None:  # the command's own process (not a test calling main)
        from ..system.signals import install

        install()
    from .group import group

    try:
        group.main(args=argv, prog_name="cuda2hip")
    except UsageFailure as exc:
        try:
            echo(f"cuda2hip: error: {exc}", err=True)
        except UsageFailure:  # standard error is gone too
            pass
        sys.exit(exc.exit_code)
    sys.exit(EXIT_OK)


def entry() -> None:
    """The `cuda2hip` command: `main`, then exit without tearing the interpreter down. Freeing
    the name tables and syntax trees at exit costs ~10 ms, which pre-commit pays on every call;
    all output is flushed, files are closed and written atomically before this point.
    A Ctrl-C at any point of `main` ends it with EXIT_INTERRUPTED and says so."""
    import os

    try:
        main()
        code = EXIT_OK
    except KeyboardInterrupt as exc:
        try:
            interrupted(exc)
        except SystemExit as done:
            code = done.code
        except UsageFailure:  # standard error is gone
            code = EXIT_INTERRUPTED
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            echo(str(exc.code), err=True)
            code = 1
    try:  # what a command that made no run (rules, explain) put in the store
        from ..cache import store

        store.flush()
    except KeyboardInterrupt:
        pass
    for stream in (sys.stdout, sys.stderr):
        if output.OUTPUT_FAILED:
            break  # said once; what is left in the buffers cannot be written either
        try:
            stream.flush()
        except (OSError, ValueError) as exc:  # a closed pipe (`| head`), a closed stream
            if stream is sys.stdout:
                try:
                    sys.stderr.write(f"cuda2hip: error: cannot write to standard output: "
                                     f"{getattr(exc, 'strerror', None) or exc}\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
                code = EXIT_ERROR
        except KeyboardInterrupt:  # while the output drains into a slow pipe: it is all written
            code = EXIT_INTERRUPTED
    os._exit(code)
