"""Which settings each file of a run gets: those of the nearest configuration above the file, as
ruff does, never the working directory's, so a tree gives the same findings whatever folder it
is checked from.

Each path named is looked up from its own folder (a file's, or the directory itself); a walk
does not enter a folder holding a configuration of its own, which is walked again with its
settings. The project root of a set of settings is its configuration's folder, else the
repository root, else the folder named. `--config FILE` and `--isolated` give every file the
same settings (the root: FILE's folder; with --isolated, as if no configuration existed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from .config import ConfigError, find_config, project_root
from ..findings import FileError
from ..results import SourceFile
from ..settings import Settings
from .discover import discover


class SettingsTree:
    """`make(config, folder)`: the settings of a run in `folder` with the configuration `config`
    (None: none; the command line applied). `fixed`: --config or --isolated was given. `fail`:
    what a configuration error ends with (default: ConfigError propagates)."""

    def __init__(self, make: Callable[[Path | None, Path], Settings], *, fixed: bool = False,
                 config: Path | None = None, fail: Callable[[str], None] | None = None):
        self._make = make
        self._fail = fail  # says a configuration error and ends the command
        self._fixed = fixed
        self._config = config
        self._found: dict[Path, Path | None] = {}
        self._settings: dict[tuple, Settings] = {}

    def config_for(self, folder: Path) -> Path | None:
        """The configuration of the files in `folder` (resolved)."""
        if self._fixed:
            return self._config
        if folder not in self._found:
            try:
                self._found[folder] = find_config(folder)
            except ConfigError as exc:  # a pyproject.toml that cannot be read
                if self._fail is None:
                    raise
                self._fail(str(exc))
        return self._found[folder]

    def settings_for(self, folder: Path) -> Settings:
        folder = folder.resolve()
        config = self.config_for(folder)
        key = ("config", config) if config is not None else ("root", project_root(folder))
        if key not in self._settings:
            self._settings[key] = self._make(config, folder)
        return self._settings[key]

    def has_own(self, folder: str) -> bool:
        """Whether a folder met in a walk holds a configuration of its own (it is walked with
        its settings, not those of the walk)."""
        if self._fixed:
            return False
        path = Path(folder)
        if not (os.path.isfile(path / "cuda2hip.toml") or os.path.isfile(path / "pyproject.toml")):
            return False  # (most folders: no need to look further)
        config = self.config_for(path.resolve())
        return config is not None and config.parent == path.resolve()


def folder_of(path: str) -> Path:
    """Where the settings of `path` are looked up: its folder (a directory: itself), or, when a
    symlink leads there, the nearest folder above it reached without one: a link out of the
    project (`linkdir/x.cu`) must not make the place it points to the project."""
    p = Path(path)
    folder = os.path.abspath(p if p.is_dir() else (p.parent if str(p.parent) else "."))
    while os.path.realpath(folder) != folder and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return Path(folder)


def discover_all(paths: list[str], tree: SettingsTree, *, writing: bool = False
                 ) -> tuple[list[tuple[Settings, list[SourceFile]]], list[FileError]]:
    """The files of `paths` grouped by their settings (groups in the order first met, files
    sorted by path), and the paths that could not be taken."""
    groups: dict[int, tuple[Settings, list[SourceFile]]] = {}
    errors: list[FileError] = []
    seen: set[str] = set()
    queue = list(paths)
    while queue:
        # the paths of one set of settings go to one `discover` (a pre-commit call names
        # hundreds of files, mostly of one configuration)
        batches: dict[int, tuple[Settings, list[str]]] = {}
        for raw in queue:
            settings = tree.settings_for(folder_of(raw))
            batches.setdefault(id(settings), (settings, []))[1].append(raw)
        queue = []
        for settings, raws in batches.values():
            def own(path: str) -> bool:
                if tree.has_own(path):
                    queue.append(path)  # walked again, with its own settings
                    return True
                return False

            files, errs = discover(raws, settings, writing=writing, nested=own)
            errors.extend(errs)
            group = groups.setdefault(id(settings), (settings, []))[1]
            for f in files:
                key = f.real or os.path.realpath(f.path)
                if key not in seen:
                    seen.add(key)
                    group.append(f)
    out = []
    for settings, files in groups.values():
        files.sort(key=lambda s: s.path.as_posix())
        out.append((settings, files))
    return out, errors
