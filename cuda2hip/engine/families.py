"""Where the code of a rule is: its family's module.

A rule file sits in a folder of the rules folder, its family (rules/warp/ballot-truncated.yaml:
`warp`), and the Python a rule names — its `kind`, a `check:` predicate, a fix `builder` — is
defined by the module of the same name under cuda2hip/checks (cuda2hip.checks.warp), which
registers it when imported (`@rule_kind`, `@predicate`, `@fix_builder`). A family's module is
imported the first time one of its rules is compiled, so a run pays for the families its files
need. A name the rule's family does not define (a user's rule in a folder of its own, `kind:
rename`) is looked for family after family, in order, until one defines it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from importlib.util import find_spec

CHECKS = "cuda2hip.checks"


@lru_cache(maxsize=1)
def families() -> tuple[str, ...]:
    """The families that have checks: the modules and packages of cuda2hip.checks, in order."""
    spec = find_spec(CHECKS)
    locations = spec.submodule_search_locations if spec is not None else None
    return tuple(sorted(m.name for m in pkgutil.iter_modules(locations or [])))


def load(family: str) -> bool:
    """Import the checks of `family` (registering its names); False if it has none."""
    if not family or family not in families():
        return False
    importlib.import_module(f"{CHECKS}.{family}")
    return True


def find(table: dict, name: str, family: str = ""):
    """The entry `name` of `table` (a registry the checks fill in as they are imported): from the
    rule's own family first, then from the first family that defines it; None if none does."""
    got = table.get(name)
    if got is not None:
        return got
    if load(family):
        got = table.get(name)
        if got is not None:
            return got
    for other in families():
        if other != family:
            load(other)
            got = table.get(name)
            if got is not None:
                return got
    return None


def load_all() -> None:
    """Every family's checks (to list every name a rule may use)."""
    for family in families():
        load(family)
