"""Named Python predicates that YAML rules use as `check: NAME`, registered by the checks of the
rule's family (families.py) with `@predicate("NAME")`.

A predicate is called as `fn(node, env, ctx, args)` and returns True (match), False/None (no
match) or a dict of extra captures to add to the match environment. Predicates hold analyses that
a pattern cannot express (e.g. "this condition depends on the thread index"); the rule that uses
one stays declarative in YAML.
"""

from __future__ import annotations

from typing import Callable

from .families import find, load_all

_PREDICATES: dict[str, Callable] = {}
# Predicates on calls that only ever accept calls of these function names: the engine then
# hands them only such calls (its callee index) and skips files that hold none of the names.
_CALLEES: dict[str, frozenset[str]] = {}
# Predicates that can only accept anything in a file holding one of these words: files without
# them skip the rule altogether.
_REQUIRES: dict[str, tuple[str, ...]] = {}


def predicate(name: str, *, callees=None, requires=None):
    def register(fn):
        if name in _PREDICATES and _PREDICATES[name] is not fn:
            raise ValueError(f"predicate {name!r} registered twice")
        _PREDICATES[name] = fn
        if callees is not None:
            _CALLEES[name] = frozenset(callees)
        if requires is not None:
            _REQUIRES[name] = tuple(requires)
        return fn

    return register


def predicate_callees(name: str) -> frozenset[str] | None:
    """The only callee names predicate `name` (found by `get_predicate`) accepts, if it declared them."""
    return _CALLEES.get(name)


def predicate_requires(name: str) -> tuple[str, ...] | None:
    """Words one of which a file must hold for predicate `name` (found by `get_predicate`) to
    accept anything in it."""
    return _REQUIRES.get(name)


def get_predicate(name: str, family: str = "") -> Callable:
    """The predicate `name` of a rule of `family` (its family's checks are imported on first use:
    a run pays for the analyses its rules use and no others)."""
    fn = find(_PREDICATES, name, family)
    if fn is None:
        load_all()
        raise KeyError(f"unknown predicate {name!r} (known: {', '.join(sorted(_PREDICATES)) or 'none'})")
    return fn
