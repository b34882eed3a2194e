"""One file through the stages: its bytes read as text, parsed, matched and fixed by its
language's frontend (`analyse`, a pure function of the file's content, path and the settings,
so its result can be kept in the store), then what the run does with it (`finish`: rewrite in
place, or hand it to a `Delivery` such as the output tree, which may also rename files and
update includes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from ..engine.engine import FIX_REVERTED, Engine
from ..findings import FileError, Finding
from ..lang.source import SourceError, SourceText, read_bytes
from ..results import Delivery, FileResult, Mode, SourceFile
from ..settings import Settings

if TYPE_CHECKING:
    from .cached import Entry


# How the reason of a file's error starts when the analysis failed (a bug), not the input.
INTERNAL_ERROR = "internal error while analysing the file"


def cache_kind(mode: Mode, settings: Settings) -> str:
    return "check" if mode is Mode.CHECK else ("fix-unsafe" if settings.unsafe_fixes else "fix")


def analyse(source: SourceText, item: SourceFile, mode: Mode, settings: Settings, engine: Engine) -> "Entry":
    """Findings (and, in fix modes, the fixed text) of one file's content."""
    from ..engine.frontends.registry import frontend
    from .cached import Entry

    path = str(item.path)
    fe = frontend(item.language)
    rules = engine.ruleset_for(path, item.language)
    try:
        if mode is Mode.CHECK:
            return Entry(fe.lint(source, rules, settings).findings)
        from ..fix.loop import allowed_applicabilities  # not needed by `check`

        outcome = fe.fix(source, rules, settings, allowed_applicabilities(settings.unsafe_fixes))
    except SourceError as exc:  # not this language at all: refused (a property of the content)
        return Entry([], error=exc.reason)
    # A file the fixes cannot be written to is reported as it is: the findings of its text.
    if not outcome.converged:
        return Entry(outcome.initial, [], None, f"fixes did not settle after {outcome.passes} passes; "
                                                "left untouched (please report it)", converged=False)
    try:
        migrated = outcome.source.to_bytes() if outcome.changed else None
    except SourceError as exc:  # a fix the file's 8-bit encoding cannot hold
        return Entry(outcome.initial, [], None, exc.reason)
    findings = outcome.remaining
    for f in outcome.fixed:
        f.fixed = True
    reverted = rules.diagnostic(FIX_REVERTED)
    if reverted is not None:
        for rej in outcome.rejected:
            f = rej.finding
            findings.append(Finding(
                code=reverted.code, rule_id=reverted.id, severity=reverted.severity, path=path,
                start=f.start, end=f.end, line=f.line, column=f.column, end_line=f.end_line,
                end_column=f.end_column, effort=reverted.effort,
                message=reverted.message(CODE=f.code, REASON=rej.reason)))
    return Entry(findings, outcome.fixed, migrated, passes=outcome.pass_sizes)


def finish(item: SourceFile, raw: bytes, entry: "Entry", mode: Mode, plan: Delivery | None,
           writes=None) -> FileResult:
    """Turn an analysis into the file's result, writing what the run writes (`writes`: a worker's
    background writes, run/workers.py, else each file is written before the next is read)."""
    path = str(item.path)
    result = FileResult(path=path, language=item.language, findings=list(entry.findings),
                        fixed=list(entry.fixed), converged=entry.converged)
    if entry.error is not None:
        result.error = FileError(path, entry.error)
        result.scanned = bool(entry.findings)  # fixes that could not be made; else not this language
        if mode is Mode.FIX and plan is not None:
            _deliver(result, plan, item, raw, None)
        return result
    final = entry.migrated if entry.migrated is not None else raw
    if item.language == "cuda" and b"include" in final:
        result.includes = _quoted_includes(final)
    if mode is Mode.CHECK:
        return result
    if plan is not None:
        final = plan.transform(item, final)
    if final != raw:
        result.original = raw
        result.migrated = final
    if mode is Mode.FIX:
        if plan is not None:
            _deliver(result, plan, item, raw, final)
        elif result.changed:
            # Where the walk found it: a symlink reached inside the tree is written through.
            target = item.real or os.path.realpath(item.path)
            if writes is not None:
                writes.submit(result, target, final, raw)
            else:
                write_in_place(result, target, final, raw)
    return result


def _quoted_includes(data: bytes) -> tuple:
    from ..lang.cxx.includes import quoted_includes
    from ..lang.source import decode_source

    try:  # offsets, as the findings', into the UTF-8 text without BOM
        text = decode_source(data)[0]
    except SourceError:
        return ()
    return tuple(quoted_includes(text))


def write_in_place(result: FileResult, target, data: bytes, original: bytes) -> None:
    from ..fix.writeback import WriteRefused, rewrite  # `check` writes nothing

    try:
        rewrite(target, data, original)  # durable; refused if the file changed since it was read
        result.written = True
    except WriteRefused as exc:
        result.not_written(exc.reason)
    except OSError as exc:
        result.not_written(f"cannot write: {exc.strerror or exc}; not fixed")


def _deliver(result: FileResult, plan: Delivery, item: SourceFile, raw: bytes, final: bytes | None) -> None:
    destination, error = plan.deliver(item, raw, final)
    result.destination = destination
    result.written = destination is not None
    if error is not None and result.error is None:
        result.not_written(error)


def process_one(item: SourceFile, mode: Mode, settings: Settings, engine: Engine,
                plan: Delivery | None = None, writes=None) -> tuple[FileResult, bytes | None, "Entry | None"]:
    """(result, content digest, cacheable analysis) of one file."""
    from .cached import content_digest

    try:
        raw = read_bytes(item.path, item.real)
    except SourceError as exc:
        path = str(item.path)
        return FileResult(path=path, language=item.language, error=FileError(path, exc.reason)), None, None
    result, entry = process_content(raw, item, mode, settings, engine, plan, record=True, writes=writes)
    if entry is None:
        return result, None, None
    return result, content_digest(raw), entry


def process_content(raw: bytes, item: SourceFile, mode: Mode, settings: Settings, engine: Engine,
                    plan: Delivery | None = None, *, record: bool = False,
                    writes=None) -> tuple[FileResult, "Entry | None"]:
    """(result, analysis) of one file whose content is `raw`, whether read from `item.path` or
    held elsewhere (an editor's buffer: run/in_memory.py). `record`: key the analysis by the headers
    it reads (`Entry.deps`), for the result cache. The analysis is None when there is none."""
    path = str(item.path)
    try:
        # Python source is UTF-8 unless it declares otherwise (PEP 3120, PEP 263): no 8-bit guess.
        source = SourceText.from_bytes(raw, path, eight_bit=item.language != "python")
    except SourceError as exc:  # binary or undecodable: reported, never rewritten
        result = FileResult(path=path, language=item.language, error=FileError(path, exc.reason))
        if mode is Mode.FIX and plan is not None:
            _deliver(result, plan, item, raw, None)
        return result, None
    from ..lang.cxx import includes as include_graph

    if record:
        include_graph.record_reads()
    try:
        entry = analyse(source, item, mode, settings, engine)
    except Exception as exc:  # an engine bug must not cost the results of every other file
        error = FileError(path, f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); "
                                "left untouched; please report it")
        return FileResult(path=path, language=item.language, error=error), None
    finally:
        if record:
            # The headers the result depends on, as the analysis read them (its cache key).
            deps = include_graph.dependencies(path, raw, settings.root)
    if record:
        entry.deps = [(os.fsencode(p), d) for p, d in deps]
    return finish(item, raw, entry, mode, plan, writes), entry


def process_file(item: SourceFile, mode: Mode, settings: Settings, engine: Engine | None = None,
                 destination: Path | None = None) -> FileResult:
    """One file, in this process (no cache). `destination`: write the fixed file there instead."""
    plan = _SingleDestination(Path(destination)) if destination is not None else None
    return process_one(item, mode, settings, engine or Engine(settings), plan)[0]


class _SingleDestination(Struct):
    path: Path

    def transform(self, item: SourceFile, data: bytes) -> bytes:
        return data

    def deliver(self, item, raw, final):
        if final is None or final == raw:
            return None, None
        from ..fix.writeback import atomic_write

        try:
            atomic_write(self.path, final)
        except OSError as exc:
            return None, f"cannot write: {exc.strerror or exc}"
        return str(self.path), None
