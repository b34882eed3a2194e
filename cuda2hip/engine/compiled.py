"""Compiled rules: each rule kind turns its YAML into an object the engine dispatches to by
node kind. A kind registers itself here (`@rule_kind`) when its family's checks are imported
(families.py); kinds.py compiles a rule into its kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import tree_sitter as ts

from ..findings import Applicability, Severity
from ..rulebook.schema import Rule
from ..settings import Settings

if TYPE_CHECKING:
    from .context import FileContext


class RuleCompileError(ValueError):
    pass


class CompiledRule:
    # node kinds whose nodes `visit` receives
    kinds: frozenset[str] = frozenset()
    # receives identifier tokens of macro bodies through `token`
    wants_tokens: bool = False
    # identifiers that must all occur in a file for the rule to possibly match
    literals: tuple[str, ...] = ()
    # or groups of identifiers, one of which must occur in full (None: no such requirement)
    alternatives: tuple[tuple[str, ...], ...] | None = None
    # a rule that visits only calls of these function names (`call_expression` nodes reach it
    # through the engine's callee index instead of one visit per call); None: every call
    callees: frozenset[str] | None = None
    # the rule runs once per file through `run_file` (queries, translation-unit analyses)
    whole_file: bool = False
    # `visit` does nothing for a node unless `wanted_texts` keeps the node's text (e.g. the names
    # of the rename tables): the frontend then finds the nodes by their text instead of handing
    # every node of `kinds` to the rule, which is most of the time a rename-heavy run spends.
    by_text: bool = False

    def __init__(self, rule: Rule, settings: Settings):
        self.rule = rule
        self.settings = settings
        self.code = rule.code
        self.id = rule.id
        self.severity = Severity.parse(rule.severity)
        self.effort = rule.effort
        self.applicability = Applicability(rule.fix.applicability) if rule.fix else None
        self.language = rule.language

    def visit(self, node: ts.Node, ctx: "FileContext") -> None:
        pass

    def token(self, start: int, end: int, name: bytes, ctx: "FileContext") -> None:
        pass

    def run_file(self, ctx: "FileContext") -> None:
        pass

    def wanted_texts(self, words: set[bytes]) -> set[bytes]:
        """For `by_text` rules: the words of a file (identifier-shaped) whose nodes to visit."""
        return set()

    def applies_to_fragments(self) -> bool:
        """Whether the rule also runs on macro bodies re-parsed as fragments."""
        return True

    def message(self, **values: str) -> str:
        text = self.rule.message
        for key in sorted(values, key=len, reverse=True):
            text = text.replace(f"${key}", values[key])
        return text


# kind name -> its class, filled by `@rule_kind` as the modules defining kinds are imported
KINDS: dict[str, Callable[[Rule, Settings], CompiledRule]] = {}


def rule_kind(name: str):
    def register(cls):
        KINDS[name] = cls
        return cls

    return register
