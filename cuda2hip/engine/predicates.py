"""Registry of named Python predicates that YAML rules use as `check: NAME`.

A predicate is called as `fn(node, env, ctx, args)` and returns True (match), False/None (no
match) or a dict of extra captures to add to the match environment. Predicates hold analyses that
a pattern cannot express (e.g. "this condition depends on the thread index"); the rule that uses
one stays declarative in YAML.
"""

from __future__ import annotations

from typing import Callable

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
    """The only callee names predicate `name` accepts, if it declared them."""
    get_predicate(name)
    return _CALLEES.get(name)


def predicate_requires(name: str) -> tuple[str, ...] | None:
    """Words one of which a file must hold for predicate `name` to accept anything in it."""
    get_predicate(name)
    return _REQUIRES.get(name)


def get_predicate(name: str) -> Callable:
    if name not in _PREDICATES:
        # Plugin modules are imported on first use of one of their names only, so that a run
        # pays for the analyses its rules use and no others.
        from ..checks import plugins

        plugins.load(plugins.PREDICATES, name)
    try:
        return _PREDICATES[name]
    except KeyError:
        known = ", ".join(sorted(_PREDICATES)) or "none"
        raise KeyError(f"unknown predicate {name!r} (known: {known})") from None
