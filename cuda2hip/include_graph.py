"""Local `#include "..."` graph: which project headers a source includes.

`cuda2hip fix src/main.cu` migrates the local headers main.cu includes (`"kernels.cuh"`) in the
same run, as long as they lie inside the project root; and rules ask which names the included
headers define (a project's own `CUDA_CHECK` macro is no leftover CUDA name).
A header is looked up next to the including file, then at the project root (no -I paths are
known; headers that cannot be found are simply not followed).
"""

from __future__ import annotations

import os
import re
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
    out = []
    here = path.resolve().parent
    for m in _LOCAL_INCLUDE.finditer(data):
        try:
            name = m.group(1).decode("utf-8")
        except UnicodeDecodeError:
            continue
        found = resolve(name, here, root)
        if found is not None and found not in out:
            out.append(found)
    return out


@lru_cache(maxsize=512)
def _includes_of(path: str, mtime_ns: int, size: int, root: str) -> tuple[str, ...]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return ()
    return tuple(str(p) for p in local_includes(Path(path), data, Path(root)))


def _stat_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def closure(start: list[Path], root: Path) -> list[Path]:
    """Every project header reachable from `start` through quoted includes (start excluded),
    breadth first, each once (include cycles are fine)."""
    root = root.resolve()
    seen = {p.resolve() for p in start}
    queue = [p.resolve() for p in start]
    out: list[Path] = []
    while queue:
        current = queue.pop(0)
        key = _stat_key(str(current))
        if key is None:
            continue
        for inc in _includes_of(str(current), *key, str(root)):
            p = Path(inc)
            if p not in seen:
                seen.add(p)
                out.append(p)
                queue.append(p)
    return out


def included_definitions(path: str, data: bytes, root: Path) -> frozenset[bytes]:
    """Names defined by the project headers that a file includes (transitively)."""
    from .match.defined_names import definitions_of

    p = Path(path)
    root = root.resolve()
    direct = local_includes(p, data, root)
    if not direct:
        return frozenset()
    names: set[bytes] = set()
    for header in [*direct, *closure(direct, root)]:
        key = _stat_key(str(header))
        if key is not None:
            names |= definitions_of(str(header), *key)
    return frozenset(names)


def includes_reaching(path: str, data: bytes, root: Path, wanted) -> bool:
    """Whether a project header included (transitively) satisfies `wanted(header_bytes)`."""
    p = Path(path)
    root = root.resolve()
    direct = local_includes(p, data, root)
    for header in [*direct, *closure(direct, root)]:
        try:
            if wanted(header.read_bytes()):
                return True
        except OSError:
            continue
    return False
