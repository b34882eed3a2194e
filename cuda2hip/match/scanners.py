"""Fixed built-in patterns that scan whole files, run on RE2 (google-re2, already a dependency
for user rules' expressions).

Python's `re` tries each alternative at every offset of a pattern like `\\b(?:threadIdx|...)`
(no literal prefix to skip ahead to): over cuda-samples' 7.5 MB of sources such a scan takes
~0.2 s, RE2's automaton ~0.02 s. Only patterns that mean the same in both engines belong here:
bytes, ASCII `\\w` and `\\b` (both engines' bytes semantics), no `\\s` (RE2's lacks `\\v`), no
lookaround or backreferences (RE2 refuses those). Compiled on first use: importing RE2 costs
start-up time a file that needs no scan should not pay.
"""

from __future__ import annotations

from functools import cache


class Scanner:
    """`finditer` and `search` as `re`'s: the text ends at `endpos` (RE2 would read on past it,
    so that `\b` at `endpos` inside a word would not match)."""

    __slots__ = ("_re2",)

    def __init__(self, compiled):
        self._re2 = compiled

    def finditer(self, data: bytes, pos: int = 0, endpos: int | None = None):
        if endpos is not None and endpos < len(data):
            data = data[:endpos]
        return self._re2.finditer(data, pos)

    def search(self, data: bytes, pos: int = 0, endpos: int | None = None):
        if endpos is not None and endpos < len(data):
            data = data[:endpos]
        return self._re2.search(data, pos)


@cache
def scanner(pattern: bytes) -> Scanner:
    """The RE2 form of `pattern`; match objects have `start`, `end`, `group`."""
    if b"\\s" in pattern or b"(?=" in pattern or b"(?!" in pattern or b"(?<" in pattern:
        raise ValueError(f"not a pattern RE2 runs as `re` does: {pattern!r}")
    import re2

    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # bytes in, byte offsets out, like `re`
    return Scanner(re2.compile(pattern, options))
