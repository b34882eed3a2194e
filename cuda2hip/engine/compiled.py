"""Compiled rules: each rule kind turns its YAML into an object the engine dispatches to by
node kind. Kinds register themselves here; other frontends add their own kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

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


_KINDS: dict[str, Callable[[Rule, Settings], CompiledRule]] = {}


def rule_kind(name: str):
    def register(cls):
        _KINDS[name] = cls
        return cls

    return register


def known_kinds() -> list[str]:
    _load_kinds()
    return sorted(_KINDS)


def compile_rule(rule: Rule, settings: Settings) -> CompiledRule:
    if rule.kind not in _KINDS:
        module = CORE_KIND_MODULES.get(rule.kind)
        if module is not None:  # only the module of this kind: a run pays for the kinds it uses
            import importlib

            importlib.import_module(module)
        if rule.kind not in _KINDS:
            _load_kinds()  # the kinds of other frontends (Python, build files), or no such kind
    try:
        cls = _KINDS[rule.kind]
    except KeyError:
        raise RuleCompileError(
            f"{rule.source_path}: rule {rule.code} ({rule.id}): field `kind`: unknown kind "
            f"{rule.kind!r} (known: {', '.join(sorted(_KINDS))})") from None
    try:
        return cls(rule, settings)
    except RuleCompileError as exc:
        raise RuleCompileError(f"{rule.source_path}: rule {rule.code} ({rule.id}): {exc}") from None
    except (ValueError, KeyError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        raise RuleCompileError(f"{rule.source_path}: rule {rule.code} ({rule.id}): {msg}") from None


# The rule kinds of the CUDA frontend, by the module (of this package) that registers them
# (tests/test_rule_kinds.py checks the table against the registry).
CORE_KIND_MODULES = {
    "diagnostic": "cuda2hip.engine.diagnostics", "cuda-header-guard": "cuda2hip.checks.preprocessor", "cuda-version-macro": "cuda2hip.checks.preprocessor",
    "hip-definition-collision": "cuda2hip.checks.api.hip_collisions", "include": "cuda2hip.checks.api.include", "unknown-cuda-name": "cuda2hip.checks.api.leftovers",
    "cuda-name-in-string": "cuda2hip.checks.api.leftovers", "unknown-cuda-header": "cuda2hip.checks.api.leftovers", "legacy-api": "cuda2hip.checks.api.legacy_api",
    "pattern": "cuda2hip.engine.pattern_rule", "rename": "cuda2hip.checks.api.rename", "unmapped": "cuda2hip.checks.api.rename", "rename-collision": "cuda2hip.checks.api.rename_collisions",
    "hip-runtime-include": "cuda2hip.checks.api.runtime_include",
}


def _load_core_kinds() -> None:
    import importlib

    for module in sorted(set(CORE_KIND_MODULES.values())):
        importlib.import_module(module)


def _load_kinds() -> None:
    from .frontends import registry

    _load_core_kinds()
    registry.load_rule_kinds()


def compile_rules(rules: Iterable[Rule], settings: Settings) -> list[CompiledRule]:
    return [compile_rule(r, settings) for r in rules]
