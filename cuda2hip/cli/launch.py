"""The `cuda2hip` command. A `check` or `fix` goes to the resident server of this installation when one
runs (resident/); everything else, and a check no server takes, runs in this process (cli.py).
Imports nothing else before it knows which."""

import os
import sys


def entry() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] in ("check", "fix"):  # resident.SERVED_COMMANDS, without importing it
        from ..resident.client import serve

        try:
            code = serve(argv)
        except KeyboardInterrupt:  # a Ctrl-C held while the server had not taken the check yet
            sys.stderr.write("cuda2hip: interrupted; every file written is complete, the others are untouched\n")
            sys.stderr.flush()
            os._exit(130)  # cli.INTERRUPTED, cli.EXIT_INTERRUPTED (without importing cli)
        if code is not None:
            os._exit(code)
    from .commands import entry as run_here

    run_here()
