"""Progress bar for long runs: shown on a terminal (stderr), never in pipes, files or CI logs.

rich is imported only when a bar is actually shown, which keeps short runs (pre-commit) fast.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

# Files to analyse before a bar is worth showing (about a second of work or more).
MIN_FILES = 100


class _Silent:
    def advance(self, n: int = 1) -> None:
        pass


def wanted(total: int) -> bool:
    if total < MIN_FILES or os.environ.get("CUDA2HIP_NO_PROGRESS"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress(total: int, description: str = "cuda2hip"):
    """Yields an object with `advance(n)`; a bar on a terminal for long runs, else nothing."""
    if not wanted(total):
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("files"), TimeRemainingColumn(), console=Console(stderr=True),
                   transient=True)
    with bar:
        task = bar.add_task(description, total=total)

        class _Bar:
            def advance(self, n: int = 1) -> None:
                bar.advance(task, n)

        yield _Bar()
