"""What `check` and `fix` do with the paths they are given, top to bottom:

    discover   project/discover.py: the paths -> the files of the run (SourceFile)
    parse      lang/: each file's bytes -> text (encoding, newlines) -> a tree (engine/frontends/)
    match      engine/: the rules of the file's language (checks/, per rule family) -> findings
    fix        fix/: the allowed fixes applied, the text parsed again, until nothing changes;
               the file written back (in place, or into an output tree: run/tree.py)
    report     report/: the run's results in the format asked for

Each file goes through parse -> match -> fix on its own (run/files.py), in worker processes for
larger runs (run/workers.py); a file whose result the store holds is not parsed at all
(run/cached.py).
"""

from __future__ import annotations

import os

from .engine.engine import Engine
from .project.discover import discover, with_local_headers
from .results import Mode, RunResult
from .run.memo import one_run
from .run.scope import report_headers_left_out
from .run.workers import run_files
from .settings import Settings

__all__ = ["Mode", "RunResult", "run", "run_files", "report"]


def run(paths: list[str], settings: Settings, mode: Mode, engine: Engine | None = None) -> RunResult:
    """The run of `check` (Mode.CHECK) or `fix` (FIX writes, PREVIEW does not) over `paths`."""
    with one_run(writes=mode is Mode.FIX):
        engine = engine or Engine(settings)
        files, errors = discover(paths, settings, writing=mode is Mode.FIX)
        if settings.follow_includes:
            files = with_local_headers(files, settings)
        if mode is Mode.FIX:
            from .fix.writeback import remove_stale_temps

            for directory in sorted({os.path.dirname(f.path) or "." for f in files}):
                remove_stale_temps(directory)  # what a killed run left beside the files it wrote
        results = run_files(files, settings, mode, engine)  # parse, match, fix (and write)
        # Only the files named are written (pre-commit passes the staged ones): the local headers
        # they include that need migration too are reported.
        report_headers_left_out(files, results, settings, engine)
    errors = errors + [r.error for r in results if r.error is not None]
    return RunResult(results, errors, mode)


def report(run: RunResult, fmt: str, ctx) -> str:
    """The run's results in the format `fmt` (report/: one module per format), for `ctx`
    (report.ReportContext: the engine, settings, colour)."""
    from .report import render

    return render(fmt, run, ctx)
