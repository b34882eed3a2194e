"""Run the pipeline over files: discover -> parse -> match -> fix -> (write) -> results.

Files are independent, so they run in worker processes (each builds the engine once from the
rule cache); small runs stay in-process, which keeps a pre-commit call fast. Results come back
in path order whatever the worker timing, so output is deterministic.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from .discover import SourceFile, discover, with_local_headers
from .findings import FileError, Finding
from .fix.loop import allowed_applicabilities, fix_source
from .frontends.registry import frontend
from .match.engine import FIX_REVERTED, Engine
from .settings import Settings
from .source import SourceError, SourceText
from .writeback import atomic_write

# Below this many files, worker start-up costs more than it saves.
PARALLEL_THRESHOLD = 16


class Mode(str, Enum):
    CHECK = "check"
    FIX = "fix"  # write fixed files
    PREVIEW = "preview"  # compute fixes, write nothing (--diff, --stdout)


@dataclass
class FileResult:
    path: str
    language: str
    findings: list[Finding] = field(default_factory=list)  # what remains (after fixing, in fix modes)
    fixed: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    error: FileError | None = None
    original: bytes | None = None  # full file bytes, kept when the file changed
    migrated: bytes | None = None
    written: bool = False
    converged: bool = True

    @property
    def changed(self) -> bool:
        return self.migrated is not None and self.migrated != self.original


@dataclass
class RunResult:
    files: list[FileResult]
    errors: list[FileError]  # discovery errors and per-file errors
    mode: Mode
    baselined: int = 0  # findings dropped because a --baseline file lists them

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def fixed(self) -> list[Finding]:
        return [f for r in self.files for f in r.fixed]

    @property
    def files_scanned(self) -> int:
        return sum(1 for r in self.files if r.error is None)

    @property
    def files_changed(self) -> int:
        return sum(1 for r in self.files if r.changed)


_ENGINE: Engine | None = None


def _init_worker(settings: Settings) -> None:
    global _ENGINE
    _ENGINE = Engine(settings)


def process_file(item: SourceFile, mode: Mode, settings: Settings, engine: Engine | None = None,
                 destination: Path | None = None) -> FileResult:
    engine = engine or _ENGINE
    path = str(item.path)
    result = FileResult(path=path, language=item.language)
    try:
        source = SourceText.read(item.path)
        fe = frontend(item.language)
        rules = engine.ruleset_for(path, item.language)
        if mode is Mode.CHECK:
            result.findings = fe.lint(source, rules, settings).findings
            return result
        outcome = fix_source(
            source,
            lambda s: fe.lint(s, rules, settings, validate=s is source),
            fe.parse_errors,
            allowed_applicabilities(settings.unsafe_fixes),
        )
    except SourceError as exc:
        result.error = FileError(path, exc.reason)
        return result
    result.findings = outcome.remaining
    result.converged = outcome.converged
    for f in outcome.fixed:
        f.fixed = True
    result.fixed = outcome.fixed
    reverted = rules.diagnostic(FIX_REVERTED)
    if reverted is not None:
        for rej in outcome.rejected:
            f = rej.finding
            result.findings.append(Finding(
                code=reverted.code, rule_id=reverted.id, severity=reverted.severity, path=path,
                start=f.start, end=f.end, line=f.line, column=f.column, end_line=f.end_line,
                end_column=f.end_column, effort=reverted.effort,
                message=reverted.message(CODE=f.code, REASON=rej.reason)))
    if not outcome.converged:
        result.error = FileError(path, f"fixes did not settle after {outcome.passes} passes; "
                                       "file left untouched")
        return result
    if outcome.changed:
        result.original = source.to_bytes()
        result.migrated = outcome.source.to_bytes()
        if mode is Mode.FIX:
            try:
                atomic_write(destination or item.path, result.migrated)
                result.written = True
            except OSError as exc:
                result.error = FileError(path, f"cannot write: {exc.strerror or exc}")
    return result


def _worker(args) -> FileResult:
    item, mode, settings = args
    return process_file(item, mode, settings)


def run(paths: list[str], settings: Settings, mode: Mode, engine: Engine | None = None) -> RunResult:
    engine = engine or Engine(settings)
    # Compile in the parent first: rule errors surface once, before any worker starts.
    _ = engine.compiled
    files, errors = discover(paths, settings)
    if mode is not Mode.CHECK:
        # `fix` migrates the project headers the named sources include; `check` reports on the
        # files it is given (pre-commit passes the changed files only).
        files = with_local_headers(files, settings)
    results = run_files(files, settings, mode, engine)
    errors = errors + [r.error for r in results if r.error is not None]
    return RunResult(results, errors, mode)


def run_files(files: list[SourceFile], settings: Settings, mode: Mode, engine: Engine) -> list[FileResult]:
    jobs = settings.jobs or os.cpu_count() or 1
    if jobs <= 1 or len(files) < PARALLEL_THRESHOLD:
        return [process_file(f, mode, settings, engine) for f in files]
    chunk = max(1, len(files) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(settings,)) as pool:
        return list(pool.map(_worker, [(f, mode, settings) for f in files], chunksize=chunk))
