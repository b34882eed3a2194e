"""Find the files a run works on: the paths given, directories walked (without following
symlinks out of the tree), `exclude` patterns and .gitignore files respected (pathspec)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from .findings import FileError
from .settings import Settings

# Never worth descending into.
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules",
                                 ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox"})


@dataclass(frozen=True)
class SourceFile:
    path: Path  # as the user sees it (relative to cwd where possible)
    language: str


def _exclude_spec(settings: Settings) -> pathspec.PathSpec:
    return pathspec.PathSpec.from_lines("gitwildmatch", [*settings.exclude, *settings.extend_exclude])


def _rel(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


class _Ignores:
    """Stack of .gitignore specs (each relative to its own directory)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.specs: list[tuple[Path, pathspec.PathSpec]] = []

    def load(self, directory: Path) -> None:
        if not self.enabled:
            return
        gi = directory / ".gitignore"
        if gi.is_file():
            try:
                lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self.specs.append((directory, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self.specs:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + ("/" if is_dir else "")):
                return True
        return False


def _display(path: Path) -> Path:
    """The path as the user wrote it; absolute paths inside the working directory shortened."""
    if not path.is_absolute():
        return path
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def discover(paths: list[str], settings: Settings) -> tuple[list[SourceFile], list[FileError]]:
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[Path] = set()
    exclude = _exclude_spec(settings)
    root = settings.root

    def excluded(p: Path, is_dir: bool) -> bool:
        rel = _rel(p, root)
        return rel is not None and exclude.match_file(rel + ("/" if is_dir else ""))

    def add(p: Path) -> None:
        lang = settings.language_for(p)
        if lang is None:
            return
        key = p.resolve()
        if key in seen:
            return
        seen.add(key)
        files.append(SourceFile(_display(p), lang))

    for raw in paths:
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            errors.append(FileError(raw, "no such file or directory"))
            continue
        if p.is_file():
            if settings.force_exclude and excluded(p, False):
                continue
            if settings.language_for(p) is None:
                errors.append(FileError(raw, "not a recognised source file type (see `file-types` "
                                             "in the configuration)"))
                continue
            add(p)
            continue
        if not p.is_dir():
            errors.append(FileError(raw, "not a regular file or directory"))
            continue
        tree_root = p.resolve()
        ignores = _Ignores(settings.respect_gitignore)
        # Load .gitignore files from the repository root down to the named directory.
        chain = [tree_root, *tree_root.parents]
        repo = next((d for d in chain if (d / ".git").exists()), tree_root)
        for parent in reversed(chain[:chain.index(repo) + 1]):
            ignores.load(parent)
        for dirpath, dirnames, filenames in os.walk(p, followlinks=False):
            d = Path(dirpath)
            if d.resolve() != tree_root:
                ignores.load(d)
            keep = []
            for name in sorted(dirnames):
                sub = d / name
                if name in ALWAYS_SKIPPED_DIRS or sub.is_symlink():
                    continue
                if excluded(sub, True) or ignores.ignored(sub.resolve(), True):
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                f = d / name
                if f.is_symlink():
                    # A link is followed only when its target stays inside the tree.
                    try:
                        target = f.resolve(strict=True)
                    except (OSError, RuntimeError):
                        continue
                    if tree_root not in target.parents or not target.is_file():
                        continue
                if excluded(f, False) or ignores.ignored(f.resolve(), False):
                    continue
                add(f)
    files.sort(key=lambda s: s.path.as_posix())
    return files, errors


def with_local_headers(files: list[SourceFile], settings: Settings) -> list[SourceFile]:
    """`files` plus the project headers they include (`#include "..."`, transitively, inside the
    project root, not excluded), so that a run migrates a source and its local headers together."""
    from .include_graph import closure

    if not files:
        return files
    root = settings.root.resolve()
    exclude = _exclude_spec(settings)
    seen = {f.path.resolve() for f in files}
    extra = []
    for header in closure([f.path for f in files], root):
        if header in seen:
            continue
        rel = _rel(header, root)
        lang = settings.language_for(header)
        if lang is None or rel is None or exclude.match_file(rel):
            continue
        seen.add(header)
        extra.append(SourceFile(_display(header), lang))
    if not extra:
        return files
    return sorted(files + extra, key=lambda s: s.path.as_posix())
