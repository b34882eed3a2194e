"""Standard input as a file of the run: `cuda2hip check - --stdin-filename kernel.cu` (editors,
pipes). Nothing is read from or written to disk for it."""

from __future__ import annotations

import sys
from pathlib import Path

from .output import fail as _fail


def stdin_call(paths, stdin_filename) -> str | None:
    """The name the file read from standard input goes by (`-` as the only path), else None."""
    if "-" not in paths:
        if stdin_filename is not None:
            _fail("--stdin-filename names the file read from standard input: give `-` as the path")
        return None
    if len(paths) != 1:
        _fail("`-` (standard input) is the only path of a call")
    return stdin_filename or "-"


def stdin_run(name: str, settings, engine, mode):
    """The run over standard input as the file `name` (nothing read or written there)."""
    from ..pipeline import Mode
    from ..results import RunResult
    from ..run.in_memory import check_text, fix_text

    if name == "-" or settings.language_for(Path(name)) is None:
        what = "no --stdin-filename" if name == "-" else f"{name!r} is not a recognised source file type"
        _fail(f"standard input: {what}; name it with --stdin-filename (e.g. kernel.cu) to say its language")
    raw = sys.stdin.buffer.read()
    from ..project.discover import display_path

    shown = str(display_path(Path(name)))
    if mode is Mode.CHECK:
        result = check_text(raw, shown, settings, engine)
    else:
        result = fix_text(raw, shown, settings, engine, unsafe=settings.unsafe_fixes)
    errors = [result.error] if result.error is not None else []
    return RunResult([result], errors, Mode.PREVIEW if mode is not Mode.CHECK else mode, held={shown: raw}), raw
