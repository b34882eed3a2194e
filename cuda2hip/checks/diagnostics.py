"""The `diagnostic` rule kind (rules/diagnostics, HIP0xx): findings the engine emits itself
(engine/diagnostics.py); their YAML files carry code, severity, message and docs like any rule."""

from __future__ import annotations

from ..engine.compiled import CompiledRule, rule_kind


@rule_kind("diagnostic")
class DiagnosticRule(CompiledRule):
    """Emitted by the engine, never by matching."""

    def applies_to_fragments(self) -> bool:
        return False
