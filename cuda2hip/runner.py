"""Run the pipeline over files: discover -> read -> parse -> match -> fix -> (write) -> results.

Files are independent, so they run in worker processes (each has the engine: inherited when the
platform forks, else built once from the rule cache); small runs stay in-process, which keeps a
pre-commit call fast. Results are placed by file index whatever the worker timing, so output is
deterministic.

Each file goes through two steps: `analyse` (a pure function of the file's content, path and
the settings, so its result can be cached) and `finish` (what a run does with it: rewrite in
place, or hand it to a `Delivery` such as the output tree, which may also rename files and
update includes). Results of unchanged files come from the result cache without parsing.

Ctrl-C: workers ignore SIGINT; the parent cancels the chunks not started, lets running ones
finish their (atomic) writes, stores what was done in the cache, and re-raises.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from .discover import SourceFile, discover, with_local_headers
from .file_results import Delivery, FileResult, Mode, RunResult
from .findings import FileError, Finding
from .match.engine import FIX_REVERTED, Engine
from .project_names import drop_names_defined_elsewhere
from .settings import Settings
from .source import SourceError, SourceText, read_bytes

if TYPE_CHECKING:
    from .result_cache import Entry

# How the reason of a file's error starts when the analysis failed (a bug), not the input.
INTERNAL_ERROR = "internal error while analysing the file"
# Below this many files, worker start-up costs more than it saves.
PARALLEL_THRESHOLD = 16
# Files per task sent to a worker: big enough to amortise the round trip, small enough that
# Ctrl-C and the progress bar stay responsive.
MAX_CHUNK = 16


_ENGINE: Engine | None = None
_WORKER: dict = {}


def _init_worker(settings: Settings, mode: Mode, plan: Delivery | None, stop) -> None:
    from .signals import in_worker

    # The parent decides what an interrupt stops; a worker always finishes its current file.
    in_worker(stop)
    _WORKER["stop"] = stop
    global _ENGINE
    if _ENGINE is None or _ENGINE.settings != settings:  # a forked worker inherits the engine
        _ENGINE = Engine(settings)
    _WORKER.update(settings=settings, mode=mode, plan=plan)
    from .include_graph import search_in

    search_in(settings.include_dirs)
    use_aliases = getattr(plan, "use_aliases", None)
    if use_aliases is not None:
        use_aliases()


def cache_kind(mode: Mode, settings: Settings) -> str:
    return "check" if mode is Mode.CHECK else ("fix-unsafe" if settings.unsafe_fixes else "fix")


def analyse(source: SourceText, item: SourceFile, mode: Mode, settings: Settings, engine: Engine) -> "Entry":
    """Findings (and, in fix modes, the fixed text) of one file's content."""
    from .frontends.registry import frontend
    from .result_cache import Entry

    from .match.amd_conditions import use_build_defines

    path = str(item.path)
    fe = frontend(item.language)
    rules = engine.ruleset_for(path, item.language)
    # its -D macros in the build (compile_commands.json) decide its `#if` arms
    use_build_defines(settings.defines.get(item.real or os.path.realpath(path), ()) if settings.defines else ())
    try:
        if mode is Mode.CHECK:
            return Entry(fe.lint(source, rules, settings).findings)
        from .fix.loop import allowed_applicabilities  # not needed by `check`

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


def finish(item: SourceFile, raw: bytes, entry: "Entry", mode: Mode, plan: Delivery | None) -> FileResult:
    """Turn an analysis into the file's result, writing what the run writes."""
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
            if _WRITES is not None:
                _WRITES.submit(result, target, final, raw)
            else:
                _write_in_place(result, target, final, raw)
    return result


def _quoted_includes(data: bytes) -> tuple:
    from .include_graph import quoted_includes
    from .source import decode_source

    try:  # offsets, as the findings', into the UTF-8 text without BOM
        text = decode_source(data)[0]
    except SourceError:
        return ()
    return tuple(quoted_includes(text))


def _write_in_place(result: FileResult, target, data: bytes, original: bytes) -> None:
    from .writeback import WriteRefused, rewrite  # `check` writes nothing

    try:
        rewrite(target, data, original)  # durable; refused if the file changed since it was read
        result.written = True
    except WriteRefused as exc:
        result.not_written(exc.reason)
    except OSError as exc:
        result.not_written(f"cannot write: {exc.strerror or exc}; not fixed")


class _BackgroundWrites:
    """In a worker, in-place writes (mostly waiting for fsync) run on a thread while the next
    file is analysed; a chunk returns only once its writes are done."""

    def __init__(self):
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cuda2hip-write")
        self.pending = []

    def submit(self, result: FileResult, target, data: bytes, original: bytes) -> None:
        self.pending.append(self.pool.submit(_write_in_place, result, target, data, original))

    def wait(self) -> None:
        for fut in self.pending:
            fut.result()
        self.pending.clear()


_WRITES: _BackgroundWrites | None = None


def _deliver(result: FileResult, plan: Delivery, item: SourceFile, raw: bytes, final: bytes | None) -> None:
    destination, error = plan.deliver(item, raw, final)
    result.destination = destination
    result.written = destination is not None
    if error is not None and result.error is None:
        result.not_written(error)


def process_one(item: SourceFile, mode: Mode, settings: Settings, engine: Engine,
                plan: Delivery | None = None) -> tuple[FileResult, bytes | None, "Entry | None"]:
    """(result, content digest, cacheable analysis) of one file."""
    from .result_cache import content_digest

    try:
        raw = read_bytes(item.path, item.real)
    except SourceError as exc:
        path = str(item.path)
        return FileResult(path=path, language=item.language, error=FileError(path, exc.reason)), None, None
    result, entry = process_content(raw, item, mode, settings, engine, plan, record=True)
    if entry is None:
        return result, None, None
    return result, content_digest(raw), entry


def process_content(raw: bytes, item: SourceFile, mode: Mode, settings: Settings, engine: Engine,
                    plan: Delivery | None = None, *, record: bool = False) -> tuple[FileResult, "Entry | None"]:
    """(result, analysis) of one file whose content is `raw`, whether read from `item.path` or
    held elsewhere (an editor's buffer: in_memory.py). `record`: key the analysis by the headers
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
    from . import include_graph

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
    return finish(item, raw, entry, mode, plan), entry


def process_file(item: SourceFile, mode: Mode, settings: Settings, engine: Engine | None = None,
                 destination: Path | None = None) -> FileResult:
    """One file, in this process (no cache). `destination`: write the fixed file there instead."""
    plan = _SingleDestination(Path(destination)) if destination is not None else None
    return process_one(item, mode, settings, engine or _ENGINE, plan)[0]


class _SingleDestination(Struct):
    path: Path

    def transform(self, item: SourceFile, data: bytes) -> bytes:
        return data

    def deliver(self, item, raw, final):
        if final is None or final == raw:
            return None, None
        from .writeback import atomic_write

        try:
            atomic_write(self.path, final)
        except OSError as exc:
            return None, f"cannot write: {exc.strerror or exc}"
        return str(self.path), None


def _work(chunk: list[tuple[int, SourceFile]]):
    """A worker's share: the findings travel msgpack-encoded (an order of magnitude cheaper than
    pickling tens of thousands of Finding objects, in the parent too), as the cache stores them."""
    from .result_cache import encode_entry

    global _WRITES
    settings, mode, plan = _WORKER["settings"], _WORKER["mode"], _WORKER["plan"]
    if _WRITES is None and mode is Mode.FIX and plan is None:
        _WRITES = _BackgroundWrites()
    rows = []
    stop = _WORKER["stop"]
    for index, item in chunk:
        if stop.is_set():  # the run ends (a signal): the rest of the chunk is not started
            break
        result, digest, entry = process_one(item, mode, settings, _ENGINE, plan)
        if entry is not None:
            result.findings, result.fixed = [], []  # rebuilt from the entry by the parent
            entry = encode_entry(entry, result.path)
        rows.append((index, result, digest, entry))
    if _WRITES is not None:
        _WRITES.wait()
    from . import store
    from .signals import RECEIVED

    store.flush()  # the facts of header contents this worker derived

    return rows, RECEIVED


def run(paths: list[str], settings: Settings, mode: Mode, engine: Engine | None = None) -> RunResult:
    from .run_scope import one_run

    with one_run(writes=mode is Mode.FIX):
        return _run(paths, settings, mode, engine)


def _run(paths: list[str], settings: Settings, mode: Mode, engine: Engine | None) -> RunResult:
    engine = engine or Engine(settings)
    files, errors = discover(paths, settings, writing=mode is Mode.FIX)
    return _run_found(files, errors, settings, mode, engine)


def run_grouped(groups, errors: list[FileError], mode: Mode, engine_for) -> RunResult:
    """One run over files grouped by their settings (config_tree.discover_all), each group with
    its own settings and engine (`engine_for(settings)`); results sorted by path."""
    from .run_scope import one_run

    results: list[FileResult] = []
    errors = list(errors)
    with one_run(writes=mode is Mode.FIX):
        for settings, files in groups:
            if files:
                others = [f for s, fs in groups if s is not settings for f in fs]
                part = _run_found(files, [], settings, mode, engine_for(settings), others)
                results.extend(part.files)
                errors.extend(part.errors)
    results.sort(key=lambda r: Path(r.path).as_posix())
    return RunResult(results, errors, mode)


def _run_found(files: list[SourceFile], errors: list[FileError], settings: Settings, mode: Mode,
               engine: Engine, others: list[SourceFile] = ()) -> RunResult:
    from .header_scope import report_headers_left_out

    if settings.follow_includes:
        files = with_local_headers(files, settings)
    if mode is Mode.FIX:
        from .writeback import remove_stale_temps

        for directory in sorted({os.path.dirname(f.path) or "." for f in files}):
            remove_stale_temps(directory)  # what a killed run left beside the files it wrote
    results = run_files(files, settings, mode, engine)
    # Only the files named are written (pre-commit passes the staged ones): the local headers
    # they include that need migration too are reported.
    report_headers_left_out(files, results, settings, engine, others)
    errors = errors + [r.error for r in results if r.error is not None]
    return RunResult(results, errors, mode)


def run_files(files: list[SourceFile], settings: Settings, mode: Mode, engine: Engine,
              plan: Delivery | None = None) -> list[FileResult]:
    """Results of `files`, in their order: cached ones first, the rest computed."""
    from . import content_facts
    from .result_cache import ResultCache, decode_entry_head, own_paths

    from .include_graph import search_in

    content_facts.configure(settings.use_cache)  # what headers define, kept as results are
    search_in(settings.include_dirs)  # where this run's quoted includes are found
    results: list[FileResult | None] = [None] * len(files)
    cache = ResultCache.open(settings, cache_kind(mode, settings))
    try:
        pending: list[int] = []
        for index, item in enumerate(files):
            hit = None
            if cache is not None:
                try:
                    raw = read_bytes(item.path, item.real)
                except SourceError:
                    raw = None  # reported when processed
                if raw is not None:
                    entry = cache.lookup(str(item.path), raw, settings.root, mode is not Mode.CHECK)
                    if entry is not None:
                        hit = finish(item, raw, entry, mode, plan)
            if hit is None:
                pending.append(index)
            else:
                results[index] = hit

        def collect(index: int, result: FileResult, digest: bytes | None, entry: "Entry | bytes | None") -> None:
            if isinstance(entry, bytes):  # from a worker
                encoded, entry = entry, decode_entry_head(entry)
                result.findings = own_paths(list(entry.findings), result.path)
                if not result.unwritten:  # else nothing was fixed
                    result.set_encoded_fixed(bytes(entry.fixed))  # a copy: the Raw would keep the whole blob
            else:
                encoded = None
            results[index] = result
            if cache is not None and entry is not None and digest is not None:
                cache.put(cache.key(result.path, digest), entry, result.path, encoded)

        # Rules are compiled only when a file needs them (a run served by the cache compiles
        # nothing), in the parent first: rule errors surface once, before any worker starts.
        # Few files compile only the rules whose words they hold; many (worker processes
        # inherit the parent's engine) compile every rule up front.
        many = len(pending) >= PARALLEL_THRESHOLD
        for language in sorted({files[i].language for i in pending}):
            engine.prepare(language, everything=many)
            if many:
                from .frontends.registry import frontend

                first = next(files[i] for i in pending if files[i].language == language)
                frontend(language).prepare(engine.ruleset_for(str(first.path), language))
        _compute(files, pending, settings, mode, engine, plan, collect)
    finally:
        if cache is not None:
            cache.close()
    for index, result in enumerate(results):
        if result is not None and result.unwritten:
            # Not fixed: what remains is what the file holds, so its findings are a check's.
            checked = process_one(files[index], Mode.CHECK, settings, engine)[0]
            result.findings, result.scanned = checked.findings, checked.error is None
    drop_names_defined_elsewhere(results)
    return results  # type: ignore[return-value]


def _compute(files, pending, settings, mode, engine, plan, collect) -> None:
    from .progress import progress

    if not pending:
        return
    jobs = settings.jobs or os.cpu_count() or 1
    with progress(len(pending), "fixing" if mode is Mode.FIX else "checking") as bar:
        if jobs <= 1 or len(pending) < PARALLEL_THRESHOLD:
            for index in pending:
                collect(index, *process_one(files[index], mode, settings, engine, plan))
                bar.advance()
            return
        _compute_parallel(files, pending, settings, mode, engine, plan, collect, bar, jobs)


def _compute_parallel(files, pending, settings, mode, engine, plan, collect, bar, jobs) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    global _ENGINE
    # Chunks shrink towards the end (a quarter of each worker's share of what is left), so that
    # the workers finish at about the same time.
    chunks = []
    k = 0
    while k < len(pending):
        size = max(1, min(MAX_CHUNK, (len(pending) - k) // (jobs * 4)))
        chunks.append([(i, files[i]) for i in pending[k:k + size]])
        k += size
    _ENGINE = engine  # what forked workers inherit
    import multiprocessing

    from .signals import Terminated

    context = multiprocessing.get_context()
    stop = context.Event()  # set: the workers end their shares after their current file
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=context, initializer=_init_worker,
                               initargs=(settings, mode, plan, stop))
    try:
        running = {pool.submit(_work, chunk) for chunk in chunks}
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                rows, signum = fut.result()
                for row in rows:
                    collect(*row)
                bar.advance(len(rows))
                if signum is not None:  # a worker was sent SIGTERM or SIGHUP: the run ends
                    raise Terminated(signum)
    except BaseException:
        # Ctrl-C, a signal (or a failure): start nothing new; running chunks stop after their
        # current file, finish its atomic write, and are still counted (and cached).
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        for fut in running:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                for row in fut.result()[0]:
                    collect(*row)
        raise
    pool.shutdown(wait=True)
