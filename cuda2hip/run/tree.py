"""Migrate a whole tree: into an output directory, as a complete copy (sources migrated, every
other file copied as it is, so the copy builds), or in place; with `rename`, CUDA source files
get HIP names and the includes and build files that name them are updated (build_renames.py).

Renaming follows PyTorch's hipify (torch/utils/hipify/hipify_python.py, `get_hip_file_path`):
`.cu` becomes `.hip` (the extension hipcc and CMake's HIP language take as HIP source); headers
keep their names (`.cuh`, `.h`, `.hpp`: an include does not care about the extension). hipify-perl
and hipify-clang do not rename at all.

Safety: the output directory may not be inside the source tree (nor hold it); nothing is written
outside it (a directory component that is a symlink is refused, never written through); links
are recreated as links and never followed out of the tree. Every write is atomic.
"""

from __future__ import annotations


import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import FileError
from ..fix.writeback import WriteRefused, atomic_copy, atomic_symlink, remove_stale_temps, rewrite, write_found
from ..project.discover import EXTERNAL_LINK, FILE, LINK, SPECIAL, TreeEntry, display_path, walk_tree
from ..results import Mode, RunResult, SourceFile
from ..settings import Settings
from .build_renames import BUILD_LANGUAGES, rewrite_build_paths
from .workers import run_files

# Source file extension -> new extension (lower-case match), see the module docstring.
RENAMES = {".cu": ".hip"}

_INCLUDE = re.compile(rb'^([ \t]*#[ \t]*include[ \t]*)(["<])([^">\r\n]+)([">])', re.MULTILINE)


class TreeError(Exception):
    """A tree run that must not start (e.g. the output directory inside the source tree)."""


@dataclass
class TreeSummary:
    source: Path
    output: Path | None  # None: in place
    sources: int = 0  # source files analysed
    changed: int = 0  # ... whose content the migration changed
    renamed: int = 0
    copied: int = 0  # other files copied (or already identical in the output)
    links: int = 0

    def line(self) -> str:
        where = f"Migrated copy of {self.source} in {self.output}" if self.output else \
            f"Migrated {self.source} in place"
        parts = [f"{self.sources} source file{'s' if self.sources != 1 else ''} "
                 f"({self.changed} changed, {self.renamed} renamed)"]
        if self.output is not None:
            parts.append(f"{self.copied} other file{'s' if self.copied != 1 else ''} copied")
            parts.append(f"{self.links} link{'s' if self.links != 1 else ''}")
        elif self.links:
            parts.append(f"{self.links} link{'s' if self.links != 1 else ''} updated")
        return f"{where}: {', '.join(parts)}."


def rewrite_includes(data: bytes, rel: str, renames: dict[str, str]) -> bytes:
    """Update `#include` lines of the file at `rel` that name a renamed file: "..." is looked up
    next to the including file, then from the top of the tree; <...> from the top only."""
    if not renames or b"include" not in data:
        return data
    base = posixpath.dirname(rel)

    def replace(m: re.Match) -> bytes:
        try:
            name = m.group(3).decode("utf-8")
        except UnicodeDecodeError:
            return m.group(0)
        candidates = (posixpath.join(base, name), name) if m.group(2) == b'"' else (name,)
        for candidate in candidates:
            norm = posixpath.normpath(candidate)
            new = renames.get(norm)
            old_base = posixpath.basename(norm)
            if new is not None and name.endswith(old_base):
                new_name = name[:len(name) - len(old_base)] + posixpath.basename(new)
                return m.group(1) + m.group(2) + new_name.encode("utf-8") + m.group(4)
        return m.group(0)

    return _INCLUDE.sub(replace, data)


def plan_renames(rels: list[str], taken: set[str], top: Path, in_place: bool) -> tuple[dict[str, str], list[str]]:
    """New names for the source files at `rels`; a name already used is an error (kept name)."""
    renames: dict[str, str] = {}
    conflicts: list[str] = []
    used = set(taken)
    for rel in sorted(rels):
        stem, ext = posixpath.splitext(rel)
        new_ext = RENAMES.get(ext.lower())
        if new_ext is None:
            continue
        new = stem + new_ext
        if new in used or (in_place and os.path.lexists(top / new)):
            conflicts.append(rel)
            continue
        used.add(new)
        renames[rel] = new
    return renames, conflicts


@dataclass
class TreePlan:
    """Delivery of a tree run (see results.Delivery): picklable, one copy per worker."""

    top: Path  # the source tree as named (display form)
    out: Path | None  # resolved output directory; None: in place
    renames: dict[str, str] = field(default_factory=dict)
    _made: set = field(default_factory=set, repr=False)

    def rel(self, item: SourceFile) -> str:
        return item.path.relative_to(self.top).as_posix()

    def use_aliases(self) -> None:
        """In place, files are renamed while others are still linted: let include resolution
        (this process's) treat an old and a new name as the same file, so that what a file sees
        does not depend on which worker got there first."""
        if self.out is None and self.renames:
            from ..lang.cxx.includes import use_renames

            base = os.path.abspath(self.top)
            use_renames({os.path.join(base, old): os.path.join(base, new) for old, new in self.renames.items()})

    def transform(self, item: SourceFile, data: bytes) -> bytes:
        if item.language == "cuda":
            return rewrite_includes(data, self.rel(item), self.renames)
        if item.language in BUILD_LANGUAGES:
            return rewrite_build_paths(data, self.rel(item), self.renames, item.language)
        return data

    def deliver(self, item: SourceFile, raw: bytes, final: bytes | None):
        rel = self.rel(item)
        new_rel = self.renames.get(rel, rel)
        if self.out is None:
            return self._in_place(item, rel, new_rel, raw, final)
        # Bad input (final None) is copied as it is: the copy stays complete.
        data = raw if final is None else final
        try:
            dest = self.destination(new_rel)
            if not _same_content(dest, data):
                write_found(dest, data, mode=stat.S_IMODE(os.stat(item.real or item.path).st_mode))
        except WriteRefused as exc:
            return None, f"cannot write to the output tree: {exc.reason}"
        except OSError as exc:
            return None, f"cannot write to the output tree: {exc.strerror or exc}"
        return str(dest), None

    def _in_place(self, item, rel, new_rel, raw, final):
        if final is None:
            return None, None  # bad input: untouched (and not renamed)
        path = item.path
        real = item.real or os.path.realpath(path)
        taken = None
        try:
            if new_rel == rel:
                if final == raw:
                    return None, None
                rewrite(real, final, raw)
                return str(path), None
            new_path = self.top / new_rel
            taken = f"cannot rename to {new_path}: a file of that name exists; left untouched"
            if os.path.lexists(new_path):
                return None, taken
            rewrite(real, final, raw, rename_to=os.path.basename(new_rel))  # a new suffix, same folder
        except WriteRefused as exc:
            return None, exc.reason
        except FileExistsError as exc:  # the new name appeared meanwhile: never overwritten
            return None, taken or f"cannot write: {exc.strerror or exc}"
        except OSError as exc:
            return None, f"cannot write: {exc.strerror or exc}"
        return str(new_path), None

    def destination(self, rel: str) -> Path:
        """OUT/rel, creating its directories; refuses to go through a symlink or leave OUT."""
        assert self.out is not None
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise OSError(f"{rel}: not a plain relative path")
        d = self.out
        for part in parts[:-1]:
            d = d / part
            if d in self._made:
                continue
            try:
                st = os.lstat(d)
            except FileNotFoundError:
                try:
                    os.mkdir(d)
                except FileExistsError:
                    pass
                st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode):  # lstat: a symlink is not a directory here
                raise OSError(f"{d} is a symlink or not a directory; refusing to write through it")
            remove_stale_temps(d)  # what a killed run left (see writeback)
            self._made.add(d)
        return d / parts[-1]


def _same_content(dest: Path, data: bytes) -> bool:
    try:
        st = os.lstat(dest)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        with open(dest, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def check_locations(src: Path, out: Path) -> None:
    if not src.is_dir():
        raise TreeError(f"{src}: the source of --output-dir must be a directory")
    s, o = src.resolve(), out.resolve()
    if o == s or s in o.parents:
        raise TreeError(f"--output-dir {out} is inside the source tree {src}; choose a directory outside it")
    if o in s.parents:
        raise TreeError(f"the source tree {src} is inside --output-dir {out}; choose another directory")
    if out.exists() and not out.is_dir():
        raise TreeError(f"--output-dir {out} exists and is not a directory")


def migrate_tree(src: Path, out: Path | None, settings: Settings, engine, *, rename: bool,
                 mode: Mode = Mode.FIX) -> tuple[RunResult, TreeSummary]:
    """Fix every source file of the tree `src`: into `out` (a complete copy) or in place."""
    if out is not None:
        check_locations(src, out)
        out.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(out)
    elif not src.is_dir():
        raise TreeError(f"{src}: --rename works on a directory")
    entries = list(walk_tree(src, settings, prune_excluded=out is None))
    sources: list[SourceFile] = []
    others: list[TreeEntry] = []
    errors: list[FileError] = []
    top_real = os.path.realpath(src)
    for e in entries:
        lang = settings.language_for(e.path)
        if e.kind == FILE and not e.excluded and lang is not None:
            sources.append(SourceFile(e.path, lang, os.path.join(top_real, e.rel)))
        elif out is not None or e.kind == LINK:
            others.append(e)
        elif e.kind == SPECIAL and lang is not None:
            errors.append(FileError(str(e.path), "not a regular file (FIFO, socket or device); left untouched"))
    top = display_path(src)  # how walk_tree spells the entries' paths
    renames: dict[str, str] = {}
    if rename:
        rels = [s.path.relative_to(top).as_posix() for s in sources]
        renames, conflicts = plan_renames(rels, {e.rel for e in entries}, src, out is None)
        for rel in conflicts:
            new = posixpath.splitext(rel)[0] + RENAMES[posixpath.splitext(rel)[1].lower()]
            errors.append(FileError(str(top / rel), f"cannot rename to {new}: a file of that name "
                                                    "exists; kept its name"))
    if out is None and mode is Mode.FIX:
        for directory in sorted({os.path.dirname(s.path) or "." for s in sources}):
            remove_stale_temps(directory)
    plan = TreePlan(top, out.resolve() if out is not None else None, renames)
    plan.use_aliases()
    results = run_files(sources, settings, mode, engine, plan)
    summary = TreeSummary(src, out, sources=len(sources))
    summary.changed = sum(1 for r in results if r.changed and r.error is None)  # and written
    summary.renamed = sum(1 for r in results if r.destination and r.error is None
                          and Path(r.path).relative_to(top).as_posix() in renames)
    if out is not None:
        _copy_others(others, plan, Path(top_real), summary, errors)
    elif renames:
        _repoint_links(others, plan, src.resolve(), summary, errors)
    errors += [r.error for r in results if r.error is not None]
    return RunResult(results, errors, mode), summary


def _copy_others(others: list[TreeEntry], plan: TreePlan, src_root: Path, summary: TreeSummary,
                 errors: list[FileError]) -> None:
    for e in others:
        try:
            if e.kind == SPECIAL:
                errors.append(FileError(str(e.path), "not a regular file (FIFO, socket or device); not copied"))
                continue
            dest = plan.destination(e.rel)
            if e.kind == FILE:
                if not _same_file(e.path, dest):
                    atomic_copy(src_root / e.rel, dest)
                summary.copied += 1
                continue
            if e.kind == LINK and e.target is not None:
                # Inside the tree: point at the same entry of the copy (renamed, if it was).
                target_rel = e.target.relative_to(src_root).as_posix() if e.target != src_root else ""
                target_rel = plan.renames.get(target_rel, target_rel)
                text = os.path.relpath(plan.out / target_rel if target_rel else plan.out, dest.parent)
            else:
                # Out of the tree (or dangling): point at the same place the original does.
                text = os.readlink(e.path)
                if e.kind == EXTERNAL_LINK and not os.path.isabs(text):
                    text = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(e.path)), text))
            if not (os.path.islink(dest) and os.readlink(dest) == text):
                atomic_symlink(text, dest)
            summary.links += 1
        except (OSError, WriteRefused) as exc:
            why = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
            errors.append(FileError(str(e.path), f"cannot copy to the output tree: {why}"))


def _repoint_links(links: list[TreeEntry], plan: TreePlan, src_root: Path, summary: TreeSummary,
                   errors: list[FileError]) -> None:
    """In place: links to a renamed file follow it (relative links stay relative)."""
    for e in links:
        if e.kind != LINK or e.target is None or e.target == src_root:
            continue
        new_rel = plan.renames.get(e.target.relative_to(src_root).as_posix())
        if new_rel is None or not (src_root / new_rel).is_file():
            continue
        try:
            old = os.readlink(e.path)
            new_target = src_root / new_rel
            text = str(new_target) if os.path.isabs(old) else \
                os.path.relpath(new_target, os.path.dirname(os.path.abspath(e.path)))
            atomic_symlink(text, e.path)
            summary.links += 1
        except OSError as exc:
            errors.append(FileError(str(e.path), f"cannot update the link: {exc.strerror or exc}"))


def _same_file(src: Path, dest: Path) -> bool:
    """The copy is up to date (copy2 keeps size and modification time)."""
    try:
        a, b = os.stat(src), os.lstat(dest)
    except OSError:
        return False
    return stat.S_ISREG(b.st_mode) and a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns
