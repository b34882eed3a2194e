"""What lasts one run (`one_run`) or the whole process, for the result cache and the include
graph: the rule folders' keys, the header digests a run's caches share, and the run's memo of
header reads (include_graph.run_memo); at its end the store keeps what the run put in it."""

from __future__ import annotations

import os
from pathlib import Path

from ..cache.keys import fingerprint


def _tree_files(directory: Path) -> list[str]:
    """The files under `directory` (os.walk: a third of what Path.rglob costs)."""
    out = []
    for top, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out.extend(os.path.join(top, name) for name in sorted(files))
    return out


# Rule folder -> its content key, while one run lasts (`one_run`): a check opens a cache for its
# files and one for the headers it reaches, and its rules do not change in between.
_RULE_DIR_KEYS: dict[str, str] | None = None
# The built-in rules' folder -> its content key, for the life of the process: the built-in rules
# do not change under a running process (rulebook.loader._BUILTIN keeps the rules it loaded).
_BUILTIN_DIR_KEYS: dict[str, str] = {}


# Header path -> content digest, shared by the caches of one run that writes nothing (`one_run`):
# the headers a check's files depend on are the ones its header report looks up again.
_RUN_DIGESTS: dict[str, bytes | None] | None = None


class one_run:
    """`with one_run(writes):` the rule folders' content keys are computed once for the run, and
    the digests of the headers its look-ups read too unless the run `writes` files (a fix may
    rewrite a header between two look-ups), and so are header reads and include closures
    (include_graph.run_memo); at its end, what the run put in the store is written."""

    def __init__(self, writes: bool):
        self.writes = writes

    def __enter__(self):
        global _RULE_DIR_KEYS, _RUN_DIGESTS
        _RULE_DIR_KEYS = {}
        _RUN_DIGESTS = None if self.writes else {}
        self.reads = None
        if not self.writes:
            from ..lang.cxx.includes import run_memo

            self.reads = run_memo()
            self.reads.__enter__()

    def __exit__(self, *exc):
        global _RULE_DIR_KEYS, _RUN_DIGESTS
        if self.reads is not None:
            self.reads.__exit__(*exc)
        _RULE_DIR_KEYS = _RUN_DIGESTS = None
        from ..cache import store

        store.flush()


def rule_dir_key(d: Path, *, builtin: bool) -> str:
    """A rule folder's key, by content (content_keys.py: an edit keeping size and mtime counts):
    the built-in rules' once per process, a user's once per run (`one_run`), else each time."""
    keys = _BUILTIN_DIR_KEYS if builtin else _RULE_DIR_KEYS
    got = keys.get(str(d)) if keys is not None else None
    if got is None and builtin:
        from ..rulebook.loader import RuleSource, _installed_key

        got = _installed_key([RuleSource(d, True)])  # a regular install's: keyed by the install
    if got is None:
        got = fingerprint(str(d), _tree_files(d))
        if keys is not None:
            keys[str(d)] = got
    return got


def run_digests() -> dict[str, bytes | None]:
    """Header path -> content digest: the run's, shared by its caches (`one_run` of a run that
    writes nothing), else a new one."""
    return _RUN_DIGESTS if _RUN_DIGESTS is not None else {}
