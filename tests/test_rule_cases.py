"""Every rule's own YAML test cases (the same ones `cuda2hip test-rules` runs)."""

from __future__ import annotations

import pytest

from cuda2hip.engine.engine import load_all_rules
from cuda2hip.engine.rule_tests import run_case
from cuda2hip.settings import Settings

pytestmark = pytest.mark.rules

RULES = load_all_rules(Settings(use_cache=False), tests=True)
CASES = [
    pytest.param(rule, kind, i, case, id=f"{rule.code}-{rule.id}-{kind}-{i}")
    for rule in sorted(RULES, key=lambda r: r.code)
    for kind, cases in (("valid", rule.tests.valid), ("invalid", rule.tests.invalid))
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize("rule,kind,index,case", CASES)
def test_rule_case(rule, kind, index, case):
    result = run_case(rule, kind, index, case, pool=RULES)
    assert result.ok, result.detail


@pytest.mark.parametrize("rule", sorted(RULES, key=lambda r: r.code), ids=lambda r: r.code)
def test_rule_is_documented_and_tested(rule):
    assert rule.docs.what.strip() and rule.docs.why.strip()
    assert rule.docs.references, f"{rule.code}: docs.references must cite a source"
    assert rule.tests.valid or rule.tests.invalid, f"{rule.code}: no test cases"
    if rule.fix is not None and rule.fix.applicability != "display-only" and rule.kind not in ("diagnostic",):
        assert any(not isinstance(c, str) and c.fixed is not None for c in rule.tests.invalid), \
            f"{rule.code}: a rule with an applicable fix needs at least one `fixed` test case"
