"""Which rules run: `select` / `extend-select` / `ignore` (codes, code prefixes, rule ids or ALL).

Without `select`, the rules enabled by default run. Naming a rule explicitly (its code, a code
prefix, its id, or ALL) selects opt-in rules too.
"""

from __future__ import annotations

from .schema import Rule


class SelectionError(ValueError):
    pass


def selector_matches(selector: str, rule: Rule) -> bool:
    s = selector.strip()
    return s == "ALL" or rule.code.startswith(s) or rule.id == s


def _check_known(selectors, rules: list[Rule], option: str) -> None:
    for s in selectors:
        if not any(selector_matches(s, r) for r in rules):
            raise SelectionError(f"{option}: {s!r} matches no rule (see `cuda2hip rules`)")


def select_rules(rules: list[Rule], select, extend_select=(), ignore=()) -> list[Rule]:
    select = tuple(select) if select is not None else None
    if select is not None:
        _check_known(select, rules, "select")
    _check_known(extend_select, rules, "extend-select")
    _check_known(ignore, rules, "ignore")
    chosen = []
    for r in rules:
        if select is None:
            on = r.enabled
        else:
            on = any(selector_matches(s, r) for s in select)
        if any(selector_matches(s, r) for s in extend_select):
            on = True
        if any(selector_matches(s, r) for s in ignore):
            on = False
        if on:
            chosen.append(r)
    return chosen


def split_codes(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(c.strip() for c in value.split(",") if c.strip())
