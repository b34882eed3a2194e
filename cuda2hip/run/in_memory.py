"""Check or fix one file whose content is held in memory (an editor's unsaved buffer) as if it
were at a given path: the pipeline `check` and `fix` run on a file read from disk (run/files.py),
with the run's settings and engine, and nothing read from or written to that path.

The language server (lsp/) is built on these two functions; whatever `check` does to one file's
content (frontend, rules, per-file ignores, suppressions, a baseline) it gets the same way.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..engine.engine import Engine
from ..project.names import drop_names_defined_elsewhere
from ..results import FileResult, Mode, RunResult, SourceFile
from .files import INTERNAL_ERROR, process_content

__all__ = ["INTERNAL_ERROR", "check_text", "fix_text"]
from ..settings import Settings


def check_text(raw: bytes, path: str | Path, settings: Settings, engine: Engine, *,
               baseline: set[str] | None = None) -> FileResult:
    """What `check` reports for the file at `path` if its content were `raw`. `baseline`: the
    fingerprints of a baseline file (report/baseline.py), whose findings are left out. A file
    whose type the settings do not know gets an error result."""
    result = _process(raw, Path(path), settings, engine, Mode.CHECK)
    if baseline and result.findings:
        from ..report import baseline as baselines
        from ..report.sources import Sources

        run = RunResult([result], [], Mode.CHECK)
        baselines.apply(run, settings.root, baseline, Sources(run, {result.path: raw}))
    return result


def fix_text(raw: bytes, path: str | Path, settings: Settings, engine: Engine, *,
             unsafe: bool = False) -> FileResult:
    """What `fix --diff` makes of the file at `path` if its content were `raw`: `migrated` holds
    the fixed content when it changed (safe fixes; with `unsafe`, unsafe ones too), `findings`
    what remains. Nothing is written."""
    settings = msgspec.structs.replace(settings, unsafe_fixes=unsafe)
    return _process(raw, Path(path), settings, engine, Mode.PREVIEW)


def _process(raw: bytes, path: Path, settings: Settings, engine: Engine, mode: Mode) -> FileResult:
    from ..cache import facts as content_facts
    from ..findings import FileError

    language = settings.language_for(path)
    if language is None:
        return FileResult(path=str(path), language="",
                          error=FileError(str(path), "not a recognised source file type (see `file-types` "
                                                     "in the configuration)"))
    content_facts.configure(settings.use_cache)  # what headers define, kept as a run keeps it
    result = process_content(raw, SourceFile(path, language), mode, settings, engine)[0]
    drop_names_defined_elsewhere([result])
    from ..cache import store

    store.flush()  # as at the end of a run
    return result
