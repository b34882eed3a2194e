"""The `cuda2hip` command (the console script, and `python -m cuda2hip`).

cuda2hip never imports code from the directory it runs in or from the tree it checks: before
anything else is imported, the working directory leaves the import path. `python -m` and
`python -c` put it first ('' or its full path), and relative entries (PYTHONPATH=.) name it
too; a repository's `shutil.py` or `click.py` would otherwise be imported in place of the
library. (A `cuda2hip/` package in the working directory is found by `python -m cuda2hip`
before this code runs: hence `python -P -m cuda2hip`, or the console script, see SECURITY.md.)
"""

import os
import sys


def entry() -> None:
    drop_working_directory()
    if sys.argv[1:2] != ["lsp"]:
        # msgspec imports typing_extensions when it can, for what Python 3.11's typing has: with
        # it, the inspect module and more (~6 ms of every start-up, which pre-commit pays on
        # each commit). Only the language server's libraries need it.
        sys.modules.setdefault("typing_extensions", None)
    from .commands import entry as run

    run()


def drop_working_directory() -> None:
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed: nothing can be imported from it
        cwd = None
    sys.path[:] = [p for p in sys.path if p and os.path.isabs(p) and os.path.realpath(p) != cwd]
