"""Module-level regular expressions compiled when first used.

`re.compile` runs a parser written in Python: ~0.5 M instructions a pattern. The modules a
`check` imports define dozens that one file seldom needs (a 206-line `.cu` used 22 of 57), and
pre-commit starts a process for every commit.
"""

from __future__ import annotations

import re


class LazyRegex:
    """`re.compile(pattern, flags)`, compiled when one of its attributes (`search`, `match`,
    ...) is first read. Each attribute read is then kept on the instance, so that later reads
    cost what they cost on the compiled pattern."""

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_source", "_compiled"):  # e.g. copy probing
            raise AttributeError(name)
        try:
            compiled = self._compiled
        except AttributeError:
            compiled = self._compiled = re.compile(*self._source)
        value = getattr(compiled, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"LazyRegex{self._source!r}"
