"""Find the files a run works on: the paths given, directories walked (without following
symlinks out of the tree), `exclude` patterns and .gitignore files respected (pathspec).

`walk_tree` is the one walker: `discover` takes the source files from it, and the output tree
(`output_tree.py`) takes every entry, to copy what is not migrated. Paths are matched against
.gitignore and `exclude` lexically (relative to the tree), so a walk costs one `scandir` per
directory and no per-file `resolve()`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable, Iterator

from msgspec import Struct

from ..findings import FileError
from ..fix.tempnames import is_temp_name
from ..results import SourceFile
from ..settings import Settings

# Never worth descending into.
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules",
                                 ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox"})
# Version-control folders: never written, whatever names a file in them.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})

# Kinds of tree entries.
FILE = "file"  # regular file
LINK = "link"  # symlink whose target (file or directory) is inside the tree
EXTERNAL_LINK = "external-link"  # symlink leaving the tree, or dangling: never followed
SPECIAL = "special"  # FIFO, socket, device: never read (reading a FIFO would block)


class TreeEntry(Struct, frozen=True):
    path: Path  # as the user sees it: the walked directory as named, joined with `rel`
    rel: str  # posix path relative to the walked directory
    kind: str  # FILE, LINK, EXTERNAL_LINK or SPECIAL (directories are not entries)
    excluded: bool  # matched by `exclude` / `extend-exclude` (itself or a parent directory)
    target: Path | None = None  # resolved target of a LINK


def exclude_spec(settings: Settings):
    """The `exclude` / `extend-exclude` patterns as one gitignore-style spec (None: none)."""
    patterns = [*settings.exclude, *settings.extend_exclude]
    if not patterns:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _rel(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


class _Ignores:
    """The .gitignore files that apply inside one walked tree, each matched lexically.

    A .gitignore above the tree (up to the repository root) sees paths with the tree's own
    position prepended; one inside the tree sees paths relative to its directory.
    """

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.specs: list[tuple[str, str, object]] = []  # (prefix to add, prefix to strip, spec)

    def _read(self, directory: Path):
        gi = directory / ".gitignore"
        try:
            if not gi.is_file():
                return None
            lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(lines)

    def load_above(self, directory: Path, position: str) -> None:
        """A .gitignore in `directory`, which holds the tree at `position` ('' = the tree)."""
        if self.enabled and (spec := self._read(directory)) is not None:
            self.specs.append((position + "/" if position else "", "", spec))

    def load_inside(self, directory: Path, rel: str) -> None:
        if self.enabled and (spec := self._read(directory)) is not None:
            self.specs.append(("", rel + "/", spec))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        for add, strip, spec in self.specs:
            if strip:
                if not rel.startswith(strip):
                    continue
                path = rel[len(strip):]
            else:
                path = add + rel
            if spec.match_file(path + suffix):
                return True
        return False


def held_back(real: str, settings: Settings, spec=None) -> str | None:
    """Why a run never writes the file at `real` (resolved) when a link or an include leads to
    it: it lies in a version-control folder, in a folder walks never enter, or in an excluded
    one (`spec`: exclude_spec(settings)). None: nothing holds it back."""
    vcs = _in_vcs_folder(real)
    if vcs is not None:
        return vcs
    rel = _rel(Path(real), settings.root)
    if rel is None:
        return None
    folder = next((p for p in rel.split("/")[:-1] if p in ALWAYS_SKIPPED_DIRS), None)
    if folder is not None:
        return f"inside {folder}/, a folder runs never enter"
    if spec is not None and spec.match_file(rel):
        return "excluded by `exclude` in the configuration"
    return None


def _in_vcs_folder(real: str) -> str | None:
    vcs = next((p for p in real.split(os.sep)[:-1] if p in VCS_DIRS), None)
    return None if vcs is None else f"inside {vcs}/, which cuda2hip never writes"


def display_path(path: Path) -> Path:
    """The path as the user wrote it; an absolute path under the working directory relative to
    it (as ruff shows them), one outside it absolute: a `../../x` from a sibling folder reads
    worse than the path itself."""
    if not path.is_absolute():
        return path
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


_display = display_path


def walk_tree(top: Path, settings: Settings, *, prune_excluded: bool = True,
              nested: Callable[[str], bool] | None = None) -> Iterator[TreeEntry]:
    """Every file of the tree under `top` that is not ignored (.gitignore, version-control and
    tool folders), in sorted order. Excluded directories are skipped when `prune_excluded`,
    otherwise their files come with `excluded=True`. Symlinks are reported, never descended.
    `nested(path)`: a folder with settings of its own (its own configuration), not entered."""
    tree_root = top.resolve()
    display = display_path(top)
    exclude = exclude_spec(settings)
    # The tree's position below the project root, for `exclude` (None: outside the root).
    to_root = _rel(tree_root, settings.root)
    ignores = _Ignores(settings.respect_gitignore)
    if ignores.enabled:
        # .gitignore files from the repository root down to the walked directory.
        chain = [tree_root, *tree_root.parents]
        repo = next((d for d in chain if (d / ".git").exists()), tree_root)
        for parent in reversed(chain[:chain.index(repo) + 1]):
            position = tree_root.relative_to(parent).as_posix()
            ignores.load_above(parent, "" if position == "." else position)

    def excluded(rel: str, is_dir: bool) -> bool:
        if exclude is None or to_root is None:
            return False
        full = rel if to_root in ("", ".") else f"{to_root}/{rel}"
        return exclude.match_file(full + ("/" if is_dir else ""))

    def link_target(path: str) -> Path | None:
        try:
            target = Path(os.path.realpath(path, strict=True))
        except (OSError, RuntimeError):
            return None
        return target if target == tree_root or tree_root in target.parents else None

    stack: list[tuple[str, str, bool]] = [(str(top), "", False)]  # (path, rel, inside excluded dir)
    while stack:
        dirpath, dirrel, dir_excluded = stack.pop()
        if dirrel:
            ignores.load_inside(Path(dirpath), dirrel)
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            if is_temp_name(entry.name):
                continue  # a write in progress, or left by a killed run: never copied or read
            rel = f"{dirrel}/{entry.name}" if dirrel else entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in ALWAYS_SKIPPED_DIRS or ignores.ignored(rel, True):
                    continue
                ex = dir_excluded or excluded(rel, True)
                if ex and prune_excluded:
                    continue
                if nested is not None and nested(entry.path):
                    continue
                subdirs.append((entry.path, rel, ex))
                continue
            if ignores.ignored(rel, False):
                continue
            ex = dir_excluded or excluded(rel, False)
            if ex and prune_excluded:
                continue
            path = display / rel
            if is_link:
                target = link_target(entry.path)
                if target is None:
                    yield TreeEntry(path, rel, EXTERNAL_LINK, ex)
                else:
                    yield TreeEntry(path, rel, LINK, ex, target)
                continue
            try:
                regular = stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                regular = True  # vanished or unreadable: reading it reports why
            yield TreeEntry(path, rel, FILE if regular else SPECIAL, ex)
        stack.extend(reversed(subdirs))


def _named_held_back(p: Path, real: Path, settings: Settings, spec) -> str | None:
    """Why `fix` never writes the file named `p` (resolved: `real`): one in a version-control
    folder, whatever its name; one whose name is a link into an excluded folder."""
    vcs = _in_vcs_folder(str(real))
    if vcs is not None or real == Path(os.path.abspath(p)):
        return vcs  # else named itself: the user's choice (--force-exclude applies excludes)
    why = held_back(str(real), settings, spec)
    return None if why is None else f"a link to {real}, {why}"


def _leaves_the_project(p: Path, root: Path) -> Path | None:
    """Where `p` really is, if a symlink on its way (the file or a directory) takes it out of
    the project root; None if it stays inside or no symlink is involved."""
    real = Path(os.path.realpath(p))
    if real == Path(os.path.abspath(p)):
        return None  # no link: a file named outside the project is the user's explicit choice
    real_root = Path(os.path.realpath(root))
    return None if real_root == real or real_root in real.parents else real


def discover(paths: list[str], settings: Settings, *, writing: bool = False,
             nested: Callable[[str], bool] | None = None) -> tuple[list[SourceFile], list[FileError]]:
    """The source files of `paths`, each resolved once (`SourceFile.real`). `writing`: the run
    rewrites files in place, so a file named through a symlink that leaves the project, or
    leads into an excluded folder, is refused, as a walk never follows one, and a file in a
    version-control folder is never taken. In a walk, a link into such a folder is no source."""
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[Path] = set()
    root = settings.root
    spec = exclude_spec(settings)

    for raw in paths:
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            errors.append(FileError(raw, "no such file or directory"))
            continue
        if p.is_file():
            if settings.force_exclude and (spec := exclude_spec(settings)) is not None:
                rel = _rel(p, root)
                if rel is not None and spec.match_file(rel):
                    continue
            if settings.language_for(p) is None:
                errors.append(FileError(raw, "not a recognised source file type (see `file-types` "
                                             "in the configuration)"))
                continue
            if writing and (real := _leaves_the_project(p, root)) is not None:
                errors.append(FileError(raw, f"symlink to {real}, outside the project ({root}); not "
                                             "written through (name the file itself to migrate it)"))
                continue
            key = p.resolve()
            if writing and (why := _named_held_back(p, key, settings, spec)) is not None:
                errors.append(FileError(raw, f"{why}; left untouched"))
                continue
            if key not in seen:
                seen.add(key)
                files.append(SourceFile(display_path(p), settings.language_for(p), str(key)))
            continue
        if not p.is_dir():
            errors.append(FileError(raw, "not a regular file or directory"))
            continue
        links: list[TreeEntry] = []
        top = os.path.realpath(p)
        for entry in walk_tree(p, settings, nested=nested):
            lang = settings.language_for(entry.path)
            if lang is None:
                continue
            if entry.kind == SPECIAL:
                errors.append(FileError(str(entry.path), "not a regular file (FIFO, socket or device); "
                                                         "left untouched"))
            elif entry.kind == FILE:
                key = Path(top, entry.rel)
                if key not in seen:
                    seen.add(key)
                    files.append(SourceFile(entry.path, lang, str(key)))
            elif entry.kind == LINK and entry.target is not None and entry.target.is_file() \
                    and held_back(str(entry.target), settings, spec) is None:
                links.append(entry)
        # A link inside the tree is followed only when its target was not reached directly,
        # so a file is analysed (and written) under its own name.
        for entry in links:
            if entry.target not in seen:
                seen.add(entry.target)
                files.append(SourceFile(entry.path, settings.language_for(entry.path), str(entry.target)))
    files.sort(key=lambda s: s.path.as_posix())
    return files, errors


def with_local_headers(files: list[SourceFile], settings: Settings) -> list[SourceFile]:
    """`files` plus the project headers they include (`#include "..."`, transitively, inside the
    project root, not excluded), so that a run migrates a source and its local headers together."""
    from ..lang.cxx.includes import closure

    if not files:
        return files
    root = settings.root.resolve()
    exclude = exclude_spec(settings)
    seen = {f.path.resolve() for f in files}
    extra = []
    for header in closure([f.path for f in files], root):
        if header in seen:
            continue
        rel = _rel(header, root)
        lang = settings.included_language(header)
        if rel is None or held_back(str(header), settings, exclude) is not None:
            continue
        seen.add(header)
        extra.append(SourceFile(_display(header), lang, str(header)))
    if not extra:
        return files
    return sorted(files + extra, key=lambda s: s.path.as_posix())
