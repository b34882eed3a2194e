"""What `check` would use for a file opened in the editor: the settings of its configuration, the
compiled rules (one engine per distinct settings, kept across requests) and the baseline.

The configuration is the nearest cuda2hip.toml, or pyproject.toml with a [tool.cuda2hip] table,
from the file's folder upwards (`check` run in that folder reads the same); with none, the
settings are the defaults, rooted at the workspace folder that holds the file. `--config` and
`--isolated` given to `cuda2hip lsp` fix the configuration for every file.

A project is looked up again for each analysis, by the stat stamps of the files that decide it
(the configuration file candidates from the file's folder up to the one found, and the
baseline): editing, adding or removing one takes effect on the next analysis, with no watcher
needed (`Projects.changed` tells the server which open files to analyse again).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

from ..engine.engine import Engine
from ..project.config import find_config
from ..settings import Settings

CONFIG_NAMES = ("cuda2hip.toml", "pyproject.toml")


class ProjectError(Exception):
    """The configuration, rules or baseline of a file cannot be used (the message says why)."""


def _stamp(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Project:
    """The settings, engine and baseline that files under one configuration get."""

    def __init__(self, settings: Settings, engine: Engine, baseline: set[str] | None):
        self.settings = settings
        self.engine = engine
        self.baseline = baseline
        self._exclude = None
        if settings.exclude or settings.extend_exclude:
            from ..project.discover import exclude_spec

            self._exclude = exclude_spec(settings)

    def language(self, path: Path) -> str | None:
        return self.settings.language_for(path)

    def excluded(self, path: Path) -> bool:
        """Whether `check` run over the project leaves `path` out (`exclude`, `extend-exclude`)."""
        if self._exclude is None:
            return False
        try:
            rel = path.resolve().relative_to(self.settings.root.resolve()).as_posix()
        except ValueError:
            return False
        return self._exclude.match_file(rel)


class Projects:
    """Projects by the stamps of what decides them; engines by settings (the last few kept).

    `settings_for(cwd, config)`: the settings `check` run in `cwd` would use, with the
    configuration file `config` (None: the one found from `cwd`, or the one `--config` named).
    `fixed`: `--config` or `--isolated` was given (no configuration is looked for).
    `baseline`: `--baseline FILE`; a relative path is taken from the file's workspace folder,
    as `check --baseline FILE` run there takes it."""

    KEEP_PROJECTS = 32
    KEEP_ENGINES = 4

    def __init__(self, settings_for: Callable[[Path, Path | None], Settings], *, fixed: bool = False,
                 baseline: Path | None = None):
        self.settings_for = settings_for
        self.fixed = fixed
        self.baseline = baseline
        self.folders: list[Path] = []  # the workspace folders, deepest first
        self._lock = threading.Lock()
        self._projects: dict[tuple, Project | ProjectError] = {}
        self._engines: list[tuple[Settings, Engine]] = []

    def set_folders(self, folders: list[Path]) -> None:
        self.folders = sorted({f.resolve() for f in folders}, key=lambda f: len(f.parts), reverse=True)

    def _folder_of(self, path: Path) -> Path:
        """The workspace folder that holds `path` (resolved), else its folder."""
        for folder in self.folders:
            if folder in path.parents:
                return folder
        return path.parent

    def _baseline_of(self, folder: Path) -> Path | None:
        if self.baseline is None:
            return None
        return self.baseline if self.baseline.is_absolute() else folder / self.baseline

    def key(self, path: Path) -> tuple:
        """What decides the project of `path`: its workspace folder, the stamps of the
        configuration candidates from its folder up to the first cuda2hip.toml (a pyproject.toml
        may or may not configure cuda2hip: each one on the way is stamped) and the baseline's."""
        path = path.resolve()
        folder = self._folder_of(path)
        stamps: list = [str(folder)]
        if not self.fixed:
            for d in (path.parent, *path.parent.parents):
                own = _stamp(d / CONFIG_NAMES[0])
                stamps += [own, _stamp(d / CONFIG_NAMES[1])]
                if own is not None:
                    break
        baseline = self._baseline_of(folder)
        if baseline is not None:
            stamps.append(_stamp(baseline))
        return tuple(stamps)

    def project(self, path: Path, key: tuple | None = None) -> Project:
        """The project of the file `path` (raises ProjectError). `key`: `self.key(path)`, if
        the caller has it."""
        key = key if key is not None else self.key(path)
        with self._lock:
            got = self._projects.pop(key, None)
            if got is None:
                got = self._make(path)
            self._projects[key] = got  # the most recently used last
            while len(self._projects) > self.KEEP_PROJECTS:
                del self._projects[next(iter(self._projects))]
        if isinstance(got, ProjectError):
            raise got
        return got

    def _make(self, path: Path) -> Project | ProjectError:
        path = path.resolve()
        folder = self._folder_of(path)
        try:
            config = None if self.fixed else find_config(path.parent)
            settings = self.settings_for(config.parent if config is not None else folder, config)
            engine = self._engine(settings)
        except Exception as exc:  # noqa: BLE001 - configuration, option, rule and selection errors
            return ProjectError(str(exc) or type(exc).__name__)
        baseline = None
        where = self._baseline_of(folder)
        if where is not None:
            from ..report import baseline as baselines

            try:
                baseline = baselines.read(where)
            except baselines.BaselineError as exc:
                return ProjectError(str(exc))
        return Project(settings, engine, baseline)

    def _engine(self, settings: Settings) -> Engine:
        for i, (known, engine) in enumerate(self._engines):
            if known == settings:
                self._engines.append(self._engines.pop(i))
                return engine
        engine = Engine(settings)
        self._engines.append((settings, engine))
        del self._engines[:-self.KEEP_ENGINES]
        return engine

    def forget(self) -> None:
        """Drop every project (a watched file changed); engines stay for reuse."""
        with self._lock:
            self._projects.clear()
