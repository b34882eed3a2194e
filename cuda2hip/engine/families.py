"""Where the code of a rule is: its family's modules.

A rule file sits in a folder of the rules folder, its family (rules/warp/ballot-truncated.yaml:
`warp`), and the Python a rule names — its `kind`, a `check:` predicate, a fix `builder` — is
defined by a module of the same family under cuda2hip/checks (cuda2hip.checks.warp, a module or
a package of modules), which registers it when imported (`@rule_kind`, `@predicate`,
`@fix_builder`, into the registries of `tables`). A name the rule's family does not define (a
user's rule in a folder of its own, `kind: rename`) is looked for family after family, in order,
until one defines it.

Which module defines which name is derived, never written down: the first run of a version of
the code imports every check and keeps the index {name: modules} in the store (whose keys cover
the code); later runs import only the modules that define the names their rules use (a
single-file check then imports a third of the checks). Without the store, a rule's whole family
is imported.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

CHECKS = "cuda2hip.checks"

# The registries the checks fill in as they are imported (kinds, predicates, fix builders).
_TABLES: list[dict] = []


def table(registry: dict) -> dict:
    """Declare `registry` (name -> class or function) as one the checks register names into."""
    _TABLES.append(registry)
    return registry


@lru_cache(maxsize=1)
def families() -> tuple[str, ...]:
    """The families that have checks: the modules and packages of cuda2hip.checks, in order."""
    return tuple(name for name, _ in _members(CHECKS))


def _members(package: str) -> list[tuple[str, bool]]:
    """(name, is a package) of the modules of `package`, in order."""
    import pkgutil  # only where no index is at hand
    from importlib.util import find_spec

    spec = find_spec(package)
    locations = spec.submodule_search_locations if spec is not None else None
    return sorted((m.name, m.ispkg) for m in pkgutil.iter_modules(locations or []))


def load(family: str) -> bool:
    """Import the checks of `family` (registering its names); False if it has none."""
    if not family or family not in families():
        return False
    _import_all(f"{CHECKS}.{family}")
    return True


def _import_all(module: str) -> None:
    """`module` and, for a package, every module in it."""
    got = importlib.import_module(module)
    if hasattr(got, "__path__"):
        for name, _ in _members(module):
            _import_all(f"{module}.{name}")


def find(registry: dict, name: str, family: str = ""):
    """The entry `name` of `registry`: from the modules the index says define it, else from the
    rule's own family first, then from the first family that defines it; None if none does."""
    got = registry.get(name)
    if got is not None:
        return got
    index = _index()
    if index is not None and name in index:
        for module in index[name]:
            importlib.import_module(module)
        got = registry.get(name)
        if got is not None:
            return got
    if load(family):
        got = registry.get(name)
        if got is not None:
            return got
    for other in families():
        if other != family:
            load(other)
            got = registry.get(name)
            if got is not None:
                return got
    return None


def load_all() -> None:
    """Every family's checks (to list every name a rule may use)."""
    for family in families():
        load(family)


@lru_cache(maxsize=1)
def _index() -> dict[str, list[str]] | None:
    """{name: the modules that register it}, from the store, made (every check imported once)
    when the store has none for this code; None without a store."""
    import msgspec

    from ..cache import store

    if store.location() is None:
        return None
    key = store.key("check-index")
    stored = store.get(key)
    if stored is not None:
        try:
            return msgspec.msgpack.decode(stored, type=dict[str, list[str]])
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    load_all()
    index: dict[str, set[str]] = {}
    for registry in _TABLES:
        for name, entry in registry.items():
            module = getattr(entry, "__module__", None)
            if module:
                index.setdefault(name, set()).add(module)
    made = {name: sorted(modules) for name, modules in index.items()}
    store.put(key, msgspec.msgpack.encode(made))
    return made
