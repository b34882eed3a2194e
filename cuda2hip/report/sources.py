"""The text findings point into, for formats that show code or fingerprint it, and the
repository-relative path formats that CI systems read (SARIF, GitHub annotations) need."""

from __future__ import annotations

import os
from pathlib import Path

from ..lang.source import SourceError, SourceText


def repo_path(path: str, root: Path) -> str:
    """`path` relative to the project root, with `/` separators; as given when outside it;
    shown as reports show paths (summary.shown_path)."""
    from .summary import shown_path

    return shown_path(repo_rel(path, root))


def repo_rel(path: str, root: Path) -> str:
    """`repo_path` as it is (a name that is not UTF-8 keeps its surrogate escapes)."""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return p.as_posix() if not p.is_absolute() else os.path.relpath(p).replace(os.sep, "/")


class Sources:
    """Current text of each file of a run: the migrated bytes a preview kept in memory, else
    `current`'s (path -> content held in memory: an editor's buffer), else the file on disk
    (which `fix` has already rewritten). Read once, on first use."""

    def __init__(self, run, current: dict[str, bytes] | None = None):
        self._migrated = {**(current or {}), **{r.path: r.migrated for r in run.files if r.changed}}
        self._cache: dict[str, SourceText | None] = {}

    def get(self, path: str) -> SourceText | None:
        if path not in self._cache:
            try:
                data = self._migrated.get(path)
                self._cache[path] = SourceText.from_bytes(data, path) if data is not None else SourceText.read(path)
            except SourceError:
                self._cache[path] = None
        return self._cache[path]
