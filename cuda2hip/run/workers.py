"""Many files: results of unchanged files from the store, the rest computed, in worker processes
for larger runs (each has the engine: inherited when the platform forks, else built once from
the rule cache); small runs stay in-process, which keeps a pre-commit call fast. Results are
placed by file index whatever the worker timing, so output is deterministic.

Ctrl-C, SIGTERM, SIGHUP (system/signals.py): workers ignore them; the parent cancels the chunks
not started, running ones stop after their current file and finish its (atomic) write, what was
done is stored, and the parent re-raises.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..engine.engine import Engine
from ..lang.source import SourceError, read_bytes
from ..project.names import drop_names_defined_elsewhere
from ..results import Delivery, FileResult, Mode, SourceFile
from ..settings import Settings
from .files import cache_kind, finish, process_one, write_in_place

if TYPE_CHECKING:
    from .cached import Entry


# Below this many files, worker start-up costs more than it saves.
PARALLEL_THRESHOLD = 16
# Files per task sent to a worker: big enough to amortise the round trip, small enough that
# Ctrl-C and the progress bar stay responsive.
MAX_CHUNK = 16

# A worker's engine (inherited when the platform forks) and what its tasks share.
_ENGINE: Engine | None = None
_WORKER: dict = {}


def _init_worker(settings: Settings, mode: Mode, plan: Delivery | None, stop) -> None:
    from ..system.signals import in_worker

    # The parent decides what an interrupt stops; a worker always finishes its current file.
    in_worker(stop)
    _WORKER["stop"] = stop
    global _ENGINE
    if _ENGINE is None or _ENGINE.settings != settings:  # a forked worker inherits the engine
        _ENGINE = Engine(settings)
    _WORKER.update(settings=settings, mode=mode, plan=plan)
    use_aliases = getattr(plan, "use_aliases", None)
    if use_aliases is not None:
        use_aliases()


class _BackgroundWrites:
    """In a worker, in-place writes (mostly waiting for fsync) run on a thread while the next
    file is analysed; a chunk returns only once its writes are done."""

    def __init__(self):
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cuda2hip-write")
        self.pending = []

    def submit(self, result: FileResult, target, data: bytes, original: bytes) -> None:
        self.pending.append(self.pool.submit(write_in_place, result, target, data, original))

    def wait(self) -> None:
        for fut in self.pending:
            fut.result()
        self.pending.clear()


_WRITES: _BackgroundWrites | None = None


def _work(chunk: list[tuple[int, SourceFile]]):
    """A worker's share: the findings travel msgpack-encoded (an order of magnitude cheaper than
    pickling tens of thousands of Finding objects, in the parent too), as the cache stores them."""
    from .cached import encode_entry

    global _WRITES
    settings, mode, plan = _WORKER["settings"], _WORKER["mode"], _WORKER["plan"]
    if _WRITES is None and mode is Mode.FIX and plan is None:
        _WRITES = _BackgroundWrites()
    rows = []
    stop = _WORKER["stop"]
    for index, item in chunk:
        if stop.is_set():  # the run ends (a signal): the rest of the chunk is not started
            break
        result, digest, entry = process_one(item, mode, settings, _ENGINE, plan, _WRITES)
        if entry is not None:
            result.findings, result.fixed = [], []  # rebuilt from the entry by the parent
            entry = encode_entry(entry, result.path)
        rows.append((index, result, digest, entry))
    if _WRITES is not None:
        _WRITES.wait()
    from ..cache import store
    from ..system.signals import RECEIVED

    store.flush()  # the facts of header contents this worker derived

    return rows, RECEIVED


def run_files(files: list[SourceFile], settings: Settings, mode: Mode, engine: Engine,
              plan: Delivery | None = None) -> list[FileResult]:
    """Results of `files`, in their order: cached ones first, the rest computed."""
    from ..cache import facts as content_facts
    from .cached import ResultCache, decode_entry_head, own_paths

    content_facts.configure(settings.use_cache)  # what headers define, kept as results are
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
                from ..engine.frontends.registry import frontend

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

    from ..system.signals import Terminated

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
