"""A rule's Python is found from its family, the folder it sits in under rules/: its kind, its
`check:` predicates and fix `builder`s are defined by cuda2hip/checks/<family>, which is imported
only when a rule of the family is compiled (engine/families.py); no index to keep in sync."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cuda2hip.engine import builders, compiled, families, kinds, predicates
from cuda2hip.engine.engine import load_all_rules
from cuda2hip.rulebook.loader import RuleSource, builtin_rules_dir, load_rules
from cuda2hip.settings import Settings

RULES = load_all_rules(Settings())


def _names(rule) -> list[tuple[dict, str]]:
    """(registry, name) of everything `rule` names in Python: its kind, predicates, builder."""
    out = [(compiled.KINDS, rule.kind)] if rule.kind != "pattern" else []
    stack = [rule.rule, *(rule.constraints or {}).values()] if rule.rule is not None else []
    while stack:
        obj = stack.pop()
        if obj is None:
            continue
        if obj.check is not None:
            out.append((predicates._PREDICATES, obj.check if isinstance(obj.check, str) else obj.check.name))
        for key in ("inside", "has", "follows", "precedes", "not_"):
            stack.append(getattr(obj, key))
        stack.extend(obj.all or [])
        stack.extend(obj.any or [])
    if rule.fix is not None and rule.fix.builder:
        out.append((builders._BUILDERS, rule.fix.builder))
    return out


def test_every_builtin_rule_has_a_family_with_checks():
    assert {r.family for r in RULES} == {p.name for p in builtin_rules_dir().iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert set(families.families()) == {r.family for r in RULES}


@pytest.mark.parametrize("family", sorted({r.family for r in RULES}))
def test_what_a_rule_names_is_defined_by_its_family(family):
    """Each name a rule of `family` uses comes from the module of that family (or the engine's own)."""
    families.load(family)
    for rule in (r for r in RULES if r.family == family):
        for table, name in _names(rule):
            fn = table.get(name)
            assert fn is not None, f"{rule.code}: {name!r} is not defined by cuda2hip.checks.{family}"
            module = getattr(fn, "__module__", "")
            assert module.startswith((f"cuda2hip.checks.{family}", "cuda2hip.engine.")), (rule.code, name, module)


def test_compiling_a_rule_imports_its_family_only():
    # A fresh process: the checks of other families are not imported.
    code = """
import sys
from cuda2hip.engine.kinds import compile_rule
from cuda2hip.engine.engine import load_all_rules
from cuda2hip.settings import Settings
settings = Settings()
rule = next(r for r in load_all_rules(settings) if r.code == "HIP501")
compile_rule(rule, settings)
print(sorted(m for m in sys.modules if m.startswith("cuda2hip.checks.")))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout.replace("'", '"')) == ["cuda2hip.checks.hazards"]


def test_a_user_rule_in_a_folder_of_its_own_finds_a_builtin_kind(tmp_path):
    rule = tmp_path / "team" / "x.yaml"
    rule.parent.mkdir()
    rule.write_text("code: USR100\nid: team-rename\nkind: rename\nseverity: warning\nsummary: s\n"
                    "message: '`$NAME` -> `$HIP`'\nnames: {myCudaThing: myHipThing}\n"
                    "docs: {what: w, why: y}\n")
    (loaded,) = load_rules([RuleSource(tmp_path, builtin=False)], use_cache=False)
    assert loaded.family == "team"
    assert type(kinds.compile_rule(loaded, Settings())).__module__ == "cuda2hip.checks.api.rename"


def test_an_unknown_name_lists_the_known_ones(tmp_path):
    rule = tmp_path / "x.yaml"
    rule.write_text("code: USR101\nid: odd\nkind: no-such-kind\nseverity: warning\nsummary: s\nmessage: m\n"
                    "docs: {what: w, why: y}\n")
    (loaded,) = load_rules([RuleSource(tmp_path, builtin=False)], use_cache=False)
    assert loaded.family == ""
    with pytest.raises(compiled.RuleCompileError, match="unknown kind 'no-such-kind' .*known: .*hip-runtime-include"):
        kinds.compile_rule(loaded, Settings())
