"""Named Python fix builders that YAML rules use as `fix: {builder: NAME}`, registered by the
checks of the rule's family (families.py) with `@fix_builder("NAME")`.

A builder is called as `fn(match, ctx, rule)` with the matched node and captures, and returns a
`BuiltFix` (edits, optionally a different applicability, message or effort; edits None for a
finding without a fix whose message or effort still changes), or None when it cannot build a fix
that keeps the meaning (the finding is then reported without a fix), or False when the match is
not a finding after all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import tree_sitter as ts
from msgspec import Struct, field

from ..findings import Edit
from .families import find, load_all

if TYPE_CHECKING:
    from .pattern import Capture

_BUILDERS: dict[str, Callable] = {}


class Match(Struct):
    node: ts.Node
    env: dict[str, "Capture"]
    start: int
    end: int


class BuiltFix(Struct):
    # None: the finding gets no fix, but message / effort / data overrides still apply
    edits: list[Edit] | None
    applicability: str | None = None  # override of the rule's applicability
    message: str | None = None  # override of the rule's message (captures already expanded)
    description: str | None = None
    effort: str | None = None
    data: dict = field(default_factory=dict)
    severity: str | None = None  # override of the rule's severity (hint / info / warning / error)


def fix_builder(name: str):
    def register(fn):
        if name in _BUILDERS and _BUILDERS[name] is not fn:
            raise ValueError(f"fix builder {name!r} registered twice")
        _BUILDERS[name] = fn
        return fn

    return register


def get_builder(name: str, family: str = "") -> Callable:
    """The fix builder `name` of a rule of `family` (see predicates.get_predicate)."""
    fn = find(_BUILDERS, name, family)
    if fn is None:
        load_all()
        raise KeyError(f"unknown fix builder {name!r} (known: {', '.join(sorted(_BUILDERS)) or 'none'})")
    return fn
