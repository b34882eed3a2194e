"""Local `#include "..."` graph: which project headers a source includes.

`cuda2hip fix src/main.cu` migrates the local headers main.cu includes (`"kernels.cuh"`) in the
same run, as long as they lie inside the project root; and rules ask which names the included
headers define (a project's own `CUDA_CHECK` macro is no leftover CUDA name).
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

# Quoted includes only: <...> names system or library headers, never project files.
_LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


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
    here = os.path.dirname(path)
    for m in _LOCAL_INCLUDE.finditer(data):
        try:
            name = m.group(1).decode("utf-8")
        except UnicodeDecodeError:
            continue
        found = _resolve(name, here, root)
        if found is not None and found not in out:
            out.append(found)
    return out


def _resolve(name: str, including_dir: str, root: str) -> str | None:
    if name.endswith(("/", "/.")):
        # pathlib drops a trailing '/' or '/.' (`"dir/"` names the file `dir`), os.path does not
        found = resolve(name, Path(including_dir), Path(root))
        return None if found is None else str(found)
    inside = root if root.endswith(os.sep) else root + os.sep
    for base in (including_dir, root):
        candidate = os.path.join(base, name)
        if _is_file(candidate):
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


@lru_cache(maxsize=512)
def _includes_of(path: str, mtime_ns: int, size: int, root: str) -> tuple[str, ...]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return ()
    return tuple(_local_includes(path, data, root))


def _stat_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def closure(start: list[Path], root: Path) -> list[Path]:
    """Every project header reachable from `start` through quoted includes (start excluded),
    breadth first, each once (include cycles are fine)."""
    return [Path(p) for p in _closure([os.path.realpath(p) for p in start], os.path.realpath(root))]


def _closure(start: list[str], root: str) -> list[str]:
    seen = set(start)
    queue = list(start)
    out: list[str] = []
    while queue:
        current = queue.pop(0)
        key = _stat_key(current)
        if key is None:
            continue
        for inc in _includes_of(current, *key, root):
            if inc not in seen:
                seen.add(inc)
                out.append(inc)
                queue.append(inc)
    return out


def _headers(path: str, data: bytes, root: Path) -> list[str]:
    """The project headers a file includes, directly and transitively, resolved."""
    root_s = os.path.realpath(root)
    direct = _local_includes(os.path.realpath(path), data, root_s)
    return [*direct, *_closure(direct, root_s)] if direct else []


def included_definitions(path: str, data: bytes, root: Path) -> frozenset[bytes]:
    """Names defined by the project headers that a file includes (transitively)."""
    from .match.defined_names import definitions_of

    names: set[bytes] = set()
    for header in _headers(path, data, root):
        key = _stat_key(header)
        if key is not None:
            names |= definitions_of(header, *key)
    return frozenset(names)


def includes_reaching(path: str, data: bytes, root: Path, wanted) -> bool:
    """Whether a project header included (transitively) satisfies `wanted(header_bytes)`."""
    for header in _headers(path, data, root):
        try:
            with open(header, "rb") as fh:
                if wanted(fh.read()):
                    return True
        except OSError:
            continue
    return False
