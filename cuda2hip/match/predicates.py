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
_LOADED = False
_LOADED_ALL = False


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
    _load_plugins()
    if name not in _PREDICATES:
        _load_plugins(everything=True)
    try:
        return _PREDICATES[name]
    except KeyError:
        known = ", ".join(sorted(_PREDICATES)) or "none"
        raise KeyError(f"unknown predicate {name!r} (known: {known})") from None


def _load_plugins(everything: bool = False) -> None:
    # Modules that register predicates and fix builders; imported on first use only, so that
    # a run whose rules need none of them does not pay for importing them.
    global _LOADED, _LOADED_ALL
    if not _LOADED:
        _LOADED = True
        from . import plugins  # noqa: F401
    if everything and not _LOADED_ALL:
        import importlib

        from . import plugins

        _LOADED_ALL = True
        for module in plugins.OTHER_LANGUAGES:
            importlib.import_module(f"{plugins.__name__}.{module}")
