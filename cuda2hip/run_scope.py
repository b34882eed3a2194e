"""What lasts one run (`one_run`) or the whole process, for the result cache and the include
graph: the code's and the rule folders' stats and keys, the header digests and database
connections a run's caches share, and the run's memo of header reads (include_graph.run_memo)."""

from __future__ import annotations

import os
from pathlib import Path

from .content_keys import fingerprint


def _tree_stats(directory: Path, pattern: str) -> list[str]:
    """Path, size and mtime of the files under `directory` matching `pattern` (os.walk: a third
    of what Path.rglob costs, which a pre-commit run pays on every call)."""
    from fnmatch import fnmatchcase

    out = []
    for top, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            if pattern != "*" and not fnmatchcase(name, pattern):
                continue
            p = os.path.join(top, name)
            try:
                st = os.stat(p)
            except OSError:
                continue
            out.append(f"{p}\0{st.st_size}\0{st.st_mtime_ns}")
    return out


_CODE_STATS: tuple[str, ...] | None = None
# Rule folder -> its content key, while one run lasts (`one_run`): a check opens a cache for its
# files and one for the headers it reaches, and its rules do not change in between.
_RULE_DIR_KEYS: dict[str, str] | None = None
# The built-in rules' folder -> its content key, for the life of the process: the built-in rules
# do not change under a running process (rulebook.loader._BUILTIN keeps the rules it loaded).
_BUILTIN_DIR_KEYS: dict[str, str] = {}


# Header path -> content digest, shared by the caches of one run that writes nothing (`one_run`):
# the headers a check's files depend on are the ones its header report looks up again.
_RUN_DIGESTS: dict[str, bytes | None] | None = None


# Database path -> its connection, kept open while one run lasts (`one_run`) in the process that
# runs it (never in its forked workers): a check's cache of its files and the one of the
# headers it reaches share one connection (~0.7 ms to open and set up each).
_RUN_DBS: dict[str, object] | None = None
_RUN_PID: int | None = None


class one_run:
    """`with one_run(writes):` the rule folders' content keys are computed once for the run, and
    the digests of the headers its look-ups read too unless the run `writes` files (a fix may
    rewrite a header between two look-ups), and so are header reads and include closures
    (include_graph.run_memo); its caches share their database connections."""

    def __init__(self, writes: bool):
        self.writes = writes

    def __enter__(self):
        global _RULE_DIR_KEYS, _RUN_DIGESTS, _RUN_DBS, _RUN_PID
        _RULE_DIR_KEYS = {}
        _RUN_DIGESTS = None if self.writes else {}
        _RUN_DBS, _RUN_PID = {}, os.getpid()
        self.reads = None
        if not self.writes:
            from .include_graph import run_memo

            self.reads = run_memo()
            self.reads.__enter__()

    def __exit__(self, *exc):
        global _RULE_DIR_KEYS, _RUN_DIGESTS, _RUN_DBS, _RUN_PID
        if self.reads is not None:
            self.reads.__exit__(*exc)
        dbs = _RUN_DBS or {}
        _RULE_DIR_KEYS = _RUN_DIGESTS = _RUN_DBS = _RUN_PID = None
        for db in dbs.values():
            try:
                db.close()
            except Exception:
                pass


def run_dbs() -> dict | None:
    """The run's shared connections, in the process that runs it (None elsewhere)."""
    return _RUN_DBS if _RUN_PID == os.getpid() else None


def code_stats() -> tuple[str, ...]:
    """The code (editable installs change under the cache) and the parser and grammar binaries
    (importlib.metadata would cost more start-up time than the whole lookup), as this process
    imported them: read once per process (a check opens two caches, each a walk of the package)."""
    global _CODE_STATS
    if _CODE_STATS is None:
        from importlib.util import find_spec

        parts = _tree_stats(Path(__file__).resolve().parent, "*.py")
        for module in ("tree_sitter", "tree_sitter_cuda"):
            spec = find_spec(module)
            for location in (spec.submodule_search_locations or []) if spec else []:
                parts += _tree_stats(Path(location), "*.so")
        _CODE_STATS = tuple(parts)
    return _CODE_STATS


def rule_dir_key(d: Path, *, builtin: bool) -> str:
    """A rule folder's key, by content (content_keys.py: an edit keeping size and mtime counts):
    the built-in rules' once per process, a user's once per run (`one_run`), else each time."""
    keys = _BUILTIN_DIR_KEYS if builtin else _RULE_DIR_KEYS
    got = keys.get(str(d)) if keys is not None else None
    if got is None:
        got = fingerprint(str(d), [p.split("\0", 1)[0] for p in _tree_stats(d, "*")])
        if keys is not None:
            keys[str(d)] = got
    return got


def run_digests() -> dict[str, bytes | None]:
    """Header path -> content digest: the run's, shared by its caches (`one_run` of a run that
    writes nothing), else a new one."""
    return _RUN_DIGESTS if _RUN_DIGESTS is not None else {}
