"""What a language frontend provides: lint one file (parse once, run its rules, apply
suppressions) and count parse errors of a candidate text (the fix loop rejects passes that add
errors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct, field

from ...findings import Finding
from ...lang.source import SourceText
from ...settings import Settings
from ..engine import RuleSet

if TYPE_CHECKING:
    from ...fix.loop import FixOutcome


class LintResult(Struct):
    findings: list[Finding]
    parse_errors: int = 0
    error_lines: list[int] = field(default_factory=list)
    tree: object = None  # the file's parse tree, where the fix loop may re-parse incrementally


class Frontend:
    language: str = ""

    def prepare(self, rules: RuleSet) -> None:
        """Before a run over many files (and before worker processes fork): build what every file
        will use, given the rule set of the language."""

    def lint(self, source: SourceText, rules: RuleSet, settings: Settings, *,
             validate: bool = True) -> LintResult:
        """Findings of one file. With `validate`, input that is not this language at all raises
        SourceError; the fix loop lints its own candidates with validate=False (a candidate that
        got worse is rejected by its parse-error count instead)."""
        raise NotImplementedError

    def parse_errors(self, source: SourceText, rules: RuleSet, settings: Settings) -> int:
        """Parse errors of a candidate text. The rules count where the language embeds others
        (CUDA source in Python strings: its errors are found by the rules that find the strings)."""
        raise NotImplementedError

    def fix(self, source: SourceText, rules: RuleSet, settings: Settings,
            allowed: frozenset) -> "FixOutcome":
        """Apply the allowed fixes until the file is stable (fix.loop.fix_source). Candidate texts
        are linted without validation: one that got worse is rejected by its parse-error count."""
        from ...fix.loop import fix_source  # not needed by `check`

        return fix_source(source, lambda s: self.lint(s, rules, settings, validate=s is source),
                          lambda s: self.parse_errors(s, rules, settings), allowed)
