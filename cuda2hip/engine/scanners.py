"""Fixed built-in patterns that scan whole files, run on RE2 (google-re2, already a dependency
for user rules' expressions) once a process has scanned enough text for it to pay.

Python's `re` tries each alternative at every offset of a pattern like `\\b(?:threadIdx|...)`
(no literal prefix to skip ahead to): over cuda-samples' 7.5 MB of sources such a scan takes
~0.2 s, RE2's automaton ~0.02 s. Importing RE2 costs ~3 ms, more than `re` spends on a
pre-commit call's few files: a process scans its first `RE_BYTES` with `re`, then switches.
Only the built-in patterns that mean the same in both engines belong here, never a rule's own:
bytes, ASCII `\\w` and `\\b` (both engines' bytes semantics), no `\\s` (RE2's lacks `\\v`), no
`$` (RE2's does not match before a final newline), no lookaround or backreferences (RE2 refuses
those); tests/test_scanners.py holds both engines to the same matches for each of them.
"""

from __future__ import annotations

import re
from functools import cache

RE_BYTES = 1 << 20  # text a process scans with `re` before it loads RE2
_scanned = 0


class Scanner:
    """`finditer` and `search` as `re`'s (`pos`, `endpos` included; RE2 would read on past
    `endpos`, so that `\\b` at `endpos` inside a word would not match)."""

    __slots__ = ("pattern", "_re", "_re2")

    def __init__(self, pattern: bytes):
        self.pattern = pattern
        self._re = None
        self._re2 = None

    def _engine(self, size: int):
        global _scanned
        if self._re2 is None and _scanned + size <= RE_BYTES:
            _scanned += size
            if self._re is None:
                self._re = re.compile(self.pattern)
            return self._re
        if self._re2 is None:
            import re2

            options = re2.Options()
            options.encoding = re2.Options.Encoding.LATIN1  # bytes in, byte offsets out, like `re`
            self._re2 = re2.compile(self.pattern, options)
        return self._re2

    def _run(self, method: str, data: bytes, pos: int, endpos: int | None):
        if endpos is not None and endpos < len(data):
            data = data[:max(endpos, 0)]
        return getattr(self._engine(len(data) - pos), method)(data, pos)

    def finditer(self, data: bytes, pos: int = 0, endpos: int | None = None):
        return self._run("finditer", data, pos, endpos)

    def search(self, data: bytes, pos: int = 0, endpos: int | None = None):
        return self._run("search", data, pos, endpos)


@cache
def scanner(pattern: bytes) -> Scanner:
    """The scanner of a built-in `pattern`; match objects have `start`, `end`, `group`. (A
    guard against the constructs whose meaning differs, for whoever adds a pattern here.)"""
    if any(bad in pattern for bad in (b"\\s", b"\\S", b"$", b"\\Z", b"[:")) or re.search(rb"\(\?[^:]", pattern):
        raise ValueError(f"not a pattern RE2 runs as `re` does: {pattern!r}")
    return Scanner(pattern)
