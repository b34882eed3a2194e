"""Compiling a rule: its kind's class, the engine's own (`pattern`) or its family's
(families.py), made from the rule and the run's settings."""

from __future__ import annotations

from typing import Iterable

from ..rulebook.schema import Rule
from ..settings import Settings
from .compiled import KINDS, CompiledRule, RuleCompileError
from .families import find, load_all


def known_kinds() -> list[str]:
    load_all()
    return sorted(KINDS)


def compile_rule(rule: Rule, settings: Settings) -> CompiledRule:
    if rule.kind == "pattern":  # the engine's own kind
        from . import pattern_rule  # noqa: F401 (registers it)
    cls = find(KINDS, rule.kind, rule.family)
    if cls is None:
        raise RuleCompileError(
            f"{rule.source_path}: rule {rule.code} ({rule.id}): field `kind`: unknown kind "
            f"{rule.kind!r} (known: {', '.join(known_kinds())})")
    try:
        return cls(rule, settings)
    except RuleCompileError as exc:
        raise RuleCompileError(f"{rule.source_path}: rule {rule.code} ({rule.id}): {exc}") from None
    except (ValueError, KeyError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        raise RuleCompileError(f"{rule.source_path}: rule {rule.code} ({rule.id}): {msg}") from None


def compile_rules(rules: Iterable[Rule], settings: Settings) -> list[CompiledRule]:
    return [compile_rule(r, settings) for r in rules]
