"""Local `#include "..."` graph: which project headers a source includes.

A run reports the local headers (inside the project root) that its files include but that it
does not cover (`header_scope.py`; with --follow-includes it migrates them too); and rules ask
which names the included headers define (a project's own `CUDA_CHECK` macro is no leftover CUDA
name).
A header is looked up next to the including file, then at the project root (no -I paths are
known; headers that cannot be found are simply not followed).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from functools import lru_cache
from pathlib import Path

# In-place `--rename` runs rename files while others are still being linted: a file and its new
# name are aliases of each other (absolute, normalised paths), so an include resolves to the
# same file whether or not it has been renamed yet.
_ALIASES: dict[str, str] = {}


def use_renames(renames: dict[str, str]) -> None:
    """Resolve includes knowing that each old path of `renames` becomes its new path."""
    _ALIASES.clear()
    for old, new in renames.items():
        old, new = os.path.normpath(old), os.path.normpath(new)
        _ALIASES[old] = new
        _ALIASES[new] = old


def _existing(path: str) -> str | None:
    """`path`, or its alias where the file has been renamed (either way), if it is a file."""
    if _is_file(path):
        return path
    alias = _ALIASES.get(os.path.normpath(path)) if _ALIASES else None
    return alias if alias is not None and _is_file(alias) else None


# Quoted includes only: <...> names system or library headers, never project files. Searched
# from the `#` (a literal the regex engine scans for), then checked to start its line: a
# `^`-anchored multiline pattern costs ten times more on a whole tree.
_LOCAL_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*"([^"\n]+)"')


def quoted_includes(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, name) of each `#include "name"` directive of `data` (byte range of the
    directive, from its `#`)."""
    out = []
    for m in _LOCAL_INCLUDE.finditer(data):
        start = m.start()
        line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
        if not data[line_start:start].strip(b" \t"):
            out.append((start, m.end(), m.group(1)))
    return out


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def resolve(name: str, including_dir: Path, root: Path) -> Path | None:
    """The file a quoted include names, if it exists inside `root` (both resolved)."""
    for base in (including_dir, root):
        candidate = base / name
        if candidate.is_file():
            resolved = candidate.resolve()
            if _within(resolved, root):
                return resolved
    return None


def local_includes(path: Path, data: bytes, root: Path) -> list[Path]:
    """Project headers `path` (holding `data`) includes directly, resolved, in order."""
    return [Path(p) for p in _local_includes(os.path.realpath(path), data, str(root))]


# The same on strings (os.path instead of pathlib: a tree run resolves the includes of every file
# twice, and pathlib objects cost more than the system calls). Paths in, paths out: resolved.

def _local_includes(path: str, data: bytes, root: str) -> list[str]:
    out: list[str] = []
    for _, _, found in resolved_includes(quoted_includes(data), os.path.dirname(path), root):
        if found not in out:
            out.append(found)
    return out


def resolved_includes(found: list[tuple[int, int, bytes]], including_dir: str, root: str,
                      memo: dict | None = None) -> list[tuple[int, int, str]]:
    """`quoted_includes` of a file in `including_dir` (resolved), with the project files they
    name (resolved); includes naming no project file are left out. `memo`: look-ups already
    made (by a caller resolving many files at one moment)."""
    out: list[tuple[int, int, str]] = []
    for start, end, raw in found:
        key = (raw, including_dir)
        if memo is not None and key in memo:
            header = memo[key]
        else:
            try:
                header = _resolve(raw.decode("utf-8"), including_dir, root)
            except UnicodeDecodeError:
                header = None
            if memo is not None:
                memo[key] = header
        if header is not None:
            out.append((start, end, header))
    return out


def _resolve(name: str, including_dir: str, root: str) -> str | None:
    if name.endswith(("/", "/.")):
        # pathlib drops a trailing '/' or '/.' (`"dir/"` names the file `dir`), os.path does not
        found = resolve(name, Path(including_dir), Path(root))
        return None if found is None else str(found)
    inside = root if root.endswith(os.sep) else root + os.sep
    for base in (including_dir, root):
        candidate = _existing(os.path.join(base, name))
        if candidate is not None:
            resolved = os.path.realpath(candidate)
            if resolved == root or resolved.startswith(inside):
                return resolved
    return None


# What Path.is_file ignores (any other error propagates, as it does there).
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _NOT_THERE:
            raise
        return False
    except ValueError:
        return False


# While a file is analysed, the headers the analysis reads (path -> content digest), so that its
# cached result is keyed by them (see `dependencies`); None when nothing records.
_RECORDED: dict[str, bytes | None] | None = None


# While a run that writes nothing lasts (`run_memo`): path -> (what `_read` gave, its digest),
# and (file, root, content) -> its project headers. A check of ten files that include the same
# headers otherwise reads and resolves each of them again for every file and every analysis
# that follows includes (definitions, dependencies, the header report): ~370 reads per run.
_RUN_READS: dict[str, tuple[tuple[str, bytes] | None, bytes | None]] | None = None
_RUN_HEADERS: dict[tuple[str, str, bytes], tuple[str, ...]] | None = None


class run_memo:
    """`with run_memo():` header reads and include closures are made once for the run (only for
    runs that write nothing: a fix may rewrite a header between two reads)."""

    def __enter__(self):
        global _RUN_READS, _RUN_HEADERS
        _RUN_READS, _RUN_HEADERS = {}, {}

    def __exit__(self, *exc):
        global _RUN_READS, _RUN_HEADERS
        _RUN_READS = _RUN_HEADERS = None


def _read(path: str) -> tuple[str, bytes] | None:
    """(path, content) of a project file (once per run: `run_memo`)."""
    memo = _RUN_READS
    if memo is None:
        return _read_now(path)
    got = memo.get(path)
    if got is None:
        found = _read_now(path)  # records it
        got = memo[path] = (found, None if found is None else _digest(found[1]))
    elif _RECORDED is not None:
        _RECORDED[path] = got[1]
    return got[0]


def _read_now(path: str) -> tuple[str, bytes] | None:
    """(path, content) of a project file. During an in-place --rename run the file may move to
    its new name between being found and being read (the new file is written before the old one
    is removed, so one of the two always exists): the alias is tried, then the path again."""
    alias = _ALIASES.get(os.path.normpath(path)) if _ALIASES else None
    for candidate in (path, alias, path):
        if candidate is None:
            continue
        try:
            with open(candidate, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if _RECORDED is not None:
            _RECORDED[path] = _digest(data)
        return candidate, data
    if _RECORDED is not None:
        _RECORDED[path] = None  # looked for and not there: its appearing changes the result
    return None


def _digest(data: bytes) -> bytes:
    from ...cache.digest import blake2b

    return blake2b(data, digest_size=16).digest()


def record_reads() -> None:
    """Start recording the headers read (for the file about to be analysed)."""
    global _RECORDED
    _RECORDED = {}


def dependencies(path: str, data: bytes, root: Path, *, digests: dict | None = None) -> list[tuple[str, bytes]]:
    """What a file's result depends on outside the file: (path, content digest) of every project
    header it includes, transitively, and of every header its analysis read (recorded since
    `record_reads`, which this ends); a header looked for and missing has an empty digest. The
    result cache keys a result by these (`digests`: path -> digest already known in this run)."""
    global _RECORDED
    recorded, _RECORDED = _RECORDED, None
    deps = dict(recorded or {})
    for header in _headers(path, data, root):
        if header not in deps:
            deps[header] = _current_digest(header, digests)
    return sorted((p, d or b"") for p, d in deps.items())


def _current_digest(header: str, digests: dict | None) -> bytes | None:
    if digests is not None and header in digests:
        return digests[header]
    if _RUN_READS is not None and header in _RUN_READS:  # read already in this run
        digest = _RUN_READS[header][1]
        if digests is not None:
            digests[header] = digest
        return digest
    try:
        with open(header, "rb") as fh:
            digest = _digest(fh.read())
    except OSError:
        digest = None
    if digests is not None:
        digests[header] = digest
    return digest


def dependencies_hold(path: str, data: bytes, root: Path, deps: list[tuple[str, bytes]],
                      digests: dict) -> bool:
    """Whether the headers a cached result depended on (`dependencies` then) are unchanged: the
    same content, and no header included now that was not then (created, or newly found)."""
    known = dict(deps)
    if any((_current_digest(p, digests) or b"") != d for p, d in deps):
        return False
    return all(h in known for h in _headers(path, data, root))


@lru_cache(maxsize=512)
def _includes_in(path: str, data: bytes, root: str) -> tuple[str, ...]:
    return tuple(_local_includes(path, data, root))


def closure(start: list[Path], root: Path) -> list[Path]:
    """Every project header reachable from `start` through quoted includes (start excluded),
    breadth first, each once (include cycles are fine)."""
    return [Path(p) for p in _closure([os.path.realpath(p) for p in start], os.path.realpath(root))]


def _closure(start: list[str], root: str, stop=None) -> list[str]:
    """`stop(header)`: a header not to go into (nor list)."""
    seen = set(start)
    queue = list(start)
    out: list[str] = []
    while queue:
        got = _read(queue.pop(0))
        if got is None:
            continue
        for inc in _includes_in(got[0], got[1], root):
            if inc not in seen and (stop is None or not stop(inc)):
                seen.add(inc)
                out.append(inc)
                queue.append(inc)
    return out


def reached_outside(header: str, root: str, covered) -> list[str]:
    """`header` and the project headers it includes transitively, without going through the
    headers for which `covered(path)` holds (all resolved): what an include brings in that a
    run does not cover."""
    return [header, *_closure([header], root, covered)]


def _headers(path: str, data: bytes, root: Path) -> list[str]:
    """The project headers a file includes, directly and transitively, resolved."""
    memo = _RUN_HEADERS
    key = (path, str(root), data)
    if memo is not None and key in memo:
        headers = memo[key]
        if _RECORDED is not None:  # as the walk would have: every header it reads is recorded
            for header in headers:
                _read(header)
        return list(headers)
    root_s = os.path.realpath(root)
    direct = _local_includes(os.path.realpath(path), data, root_s)
    headers = [*direct, *_closure(direct, root_s)] if direct else []
    if memo is not None:
        memo[key] = tuple(headers)
    return headers


def included_headers(path: str, data: bytes, root: Path) -> list[tuple[str, bytes]]:
    """(path, content) of the project headers a file includes, directly and transitively."""
    out = []
    for header in _headers(path, data, root):
        got = _read(header)
        if got is not None:
            out.append((header, got[1]))
    return out


def included_definitions(path: str, data: bytes, root: Path) -> frozenset[bytes]:
    """Names defined by the project headers that a file includes (transitively)."""
    from .definitions import definitions_in

    names: set[bytes] = set()
    for header in _headers(path, data, root):
        got = _read(header)
        if got is not None:
            names |= definitions_in(got[1])
    return frozenset(names)


def included_definitions_of(ctx) -> frozenset[bytes]:
    """`included_definitions` of the file a rule's context (engine/context.py) is about, once
    per file (macro-body fragments share their file's)."""
    root = ctx.file_context
    got = root.cache.get("_included_definitions")
    if got is None:
        got = root.cache["_included_definitions"] = included_definitions(
            root.source.path, root.source.data, root.settings.root)
    return got


def includes_reaching(path: str, data: bytes, root: Path, wanted) -> bool:
    """Whether a project header included (transitively) satisfies `wanted(header_bytes)`."""
    for header in _headers(path, data, root):
        got = _read(header)
        if got is not None and wanted(got[1]):
            return True
    return False


def local_header(including: str, name: str, root: Path) -> tuple[str, bytes] | None:
    """(resolved path, content) of the project header a quoted include `name` names in the file
    `including`, or None where it is no project file."""
    found = _resolve(name, os.path.dirname(os.path.realpath(including)), os.path.realpath(root))
    return None if found is None else _read(found)
