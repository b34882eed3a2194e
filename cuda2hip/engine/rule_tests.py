"""Run the test cases a rule carries in its YAML (`tests: valid / invalid`).

valid: the rule reports nothing. invalid: the rule reports (`count` findings if given, each
message containing `message` if given); with `fixed`, `fix` (unsafe fixes allowed) must produce
exactly that text, must not add parse errors, and fixing the result again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from ..findings import Applicability
from ..lang.source import SourceText
from ..rocm_releases import invalid
from ..rulebook.schema import InvalidCase, Rule, ValidCase
from ..settings import Settings
from .engine import Engine
from .frontends.registry import frontend

DEFAULT_FILENAMES = {"cuda": "case.cu", "python": "case.py", "cmake": "CMakeLists.txt", "make": "Makefile"}
SETTINGS_FIELDS = {"target_rocm", "experimental", "library_profile", "kernel_launch", "extra"}
ALL_FIXES = frozenset({Applicability.SAFE, Applicability.UNSAFE})


@dataclass
class CaseResult:
    rule: Rule
    kind: str  # valid / invalid
    index: int
    ok: bool
    detail: str = ""

    @property
    def name(self) -> str:
        return f"{self.rule.code}-{self.kind}-{self.index}"


def _settings_for(rule: Rule, case, base: Settings | None) -> Settings:
    settings = msgspec.structs.replace(base or Settings(), select=(rule.code, *case.select), extend_select=(), ignore=(),
                                      per_file_ignores={}, rule_options={}, use_cache=False)
    if case.options:
        settings.rule_options = {rule.code: dict(case.options)}
    for key, value in case.settings.items():
        if key not in SETTINGS_FIELDS:
            raise ValueError(f"test case settings: unknown key {key!r} (allowed: {sorted(SETTINGS_FIELDS)})")
        if key == "target_rocm" and invalid(value):
            raise ValueError(f"test case settings: target_rocm: {invalid(value)}")
        setattr(settings, key, value)
    return settings


def run_case(rule: Rule, kind: str, index: int, case, base: Settings | None = None,
             pool: list[Rule] | None = None) -> CaseResult:
    """Run one case; `pool` holds the rules a case may `select` besides the one under test."""
    if isinstance(case, str):
        case = ValidCase(code=case) if kind == "valid" else InvalidCase(code=case)
    try:
        settings = _settings_for(rule, case, base)
        others = [r for r in (pool or []) if r.code != rule.code]
        engine = Engine(settings, rules=[rule, *others])
        filename = case.filename or DEFAULT_FILENAMES.get(rule.language, "case.txt")
        fe = frontend(rule.language)
        rules = engine.ruleset_for(filename, rule.language)
        source = SourceText.from_bytes(case.code.encode(), filename)
        result = fe.lint(source, rules, settings)
    except Exception as exc:  # a broken rule or case is a failure, not a crash
        return CaseResult(rule, kind, index, False, f"error: {type(exc).__name__}: {exc}")
    own = [f for f in result.findings if f.code == rule.code and not f.suppressed]
    if kind == "valid":
        if own:
            return CaseResult(rule, kind, index, False,
                              "expected no finding, got: " + "; ".join(f"{f.line}:{f.column} {f.message}" for f in own))
        return CaseResult(rule, kind, index, True)
    if not own:
        return CaseResult(rule, kind, index, False, "expected a finding, got none")
    if case.count is not None and len(own) != case.count:
        return CaseResult(rule, kind, index, False, f"expected {case.count} findings, got {len(own)}: "
                          + "; ".join(f"{f.line}:{f.column} {f.message}" for f in own))
    if case.message is not None:
        bad = [f.message for f in own if case.message not in f.message]
        if bad:
            return CaseResult(rule, kind, index, False, f"message {bad[0]!r} lacks {case.message!r}")
    if case.fixed is not None:
        out = fe.fix(source, rules, settings, ALL_FIXES)
        got = out.source.data.decode()
        if got != case.fixed:
            return CaseResult(rule, kind, index, False, f"fixed output differs:\n--- expected\n{case.fixed}\n--- got\n{got}")
        if out.rejected:
            return CaseResult(rule, kind, index, False, "a fix was rejected: it added parse errors")
        again = fe.fix(out.source, rules, settings, ALL_FIXES)  # a second `fix` run
        if again.source.data != out.source.data:
            return CaseResult(rule, kind, index, False, "fix is not idempotent: a second run changed:\n"
                              + again.source.data.decode())
    return CaseResult(rule, kind, index, True)


def run_rule_tests(rule: Rule, base: Settings | None = None, pool: list[Rule] | None = None) -> list[CaseResult]:
    results = []
    for i, case in enumerate(rule.tests.valid):
        results.append(run_case(rule, "valid", i, case, base, pool))
    for i, case in enumerate(rule.tests.invalid):
        results.append(run_case(rule, "invalid", i, case, base, pool))
    return results
