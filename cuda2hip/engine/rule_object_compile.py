"""Compile a rule's `rule:` mapping (an ast-grep style rule object) into the matchers of
rule_object.py, checked as it goes: every error names the field it is in."""

from __future__ import annotations

from ..lang import parse as parsing
from ..rulebook.schema import MatchRule, PatternSpec, Relation
from .pattern import Pattern, PatternError
from .rule_object import (AllMatcher, AnyMatcher, CalleeMatcher, CheckMatcher, FollowsMatcher, HasMatcher,
                          InsideMatcher, KindMatcher, KindSetMatcher, Matcher, NotMatcher, PatternMatcher,
                          PrecedesMatcher, QueryMatcher, RegexMatcher, RelationalMatcher, RuleObjectError)

_RELATIONS: dict[str, type[RelationalMatcher]] = {
    "inside": InsideMatcher,
    "has": HasMatcher,
    "follows": FollowsMatcher,
    "precedes": PrecedesMatcher,
}


def compile_rule_object(rule: MatchRule, language: str = "cuda", *, where: str = "rule",
                        trusted: bool = True, family: str = "") -> Matcher:
    """`trusted`: the rule object of a built-in rule (see rule_regex for what it changes);
    `family`: the rule's, whose checks define its predicates (families.py)."""
    parts: list[Matcher] = []
    try:
        if rule.pattern is not None:
            if isinstance(rule.pattern, PatternSpec):
                pat = Pattern(rule.pattern.context, language, context=rule.pattern.context,
                              selector=rule.pattern.selector)
            else:
                pat = Pattern(rule.pattern, language)
            parts.append(PatternMatcher(pat))
    except PatternError as exc:
        raise RuleObjectError(f"field `{where}.pattern`: {exc}") from None
    if rule.kind is not None:
        if not _is_known_kind(rule.kind, language):
            raise RuleObjectError(f"field `{where}.kind`: {rule.kind!r} is not a node kind of the {language} grammar")
        parts.append(KindMatcher(rule.kind))
    if rule.callee is not None:
        parts.append(CalleeMatcher(rule.callee))
    if rule.regex is not None:
        try:
            parts.append(RegexMatcher(rule.regex, trusted))
        except RuleObjectError as exc:
            raise RuleObjectError(f"field `{where}.regex`: {exc}") from None
    if rule.query is not None:
        try:
            parts.append(QueryMatcher(rule.query, language, trusted))
        except RuleObjectError as exc:
            raise RuleObjectError(f"field `{where}.query`: {exc}") from None
    if rule.check is not None:
        try:
            parts.append(CheckMatcher(rule.check, family))
        except KeyError as exc:
            raise RuleObjectError(f"field `{where}.check`: {exc.args[0]}") from None
    for key, cls in _RELATIONS.items():
        rel: Relation | None = getattr(rule, key)
        if rel is None:
            continue
        inner = compile_rule_object(rel, language, where=f"{where}.{key}", trusted=trusted, family=family)
        stop = rel.stopBy
        if isinstance(stop, MatchRule):
            stop = compile_rule_object(stop, language, where=f"{where}.{key}.stopBy", trusted=trusted, family=family)
        parts.append(cls(inner, stop))
    if rule.all is not None:
        parts.append(AllMatcher([compile_rule_object(r, language, where=f"{where}.all[{i}]", trusted=trusted, family=family)
                                 for i, r in enumerate(rule.all)]))
    if rule.any is not None:
        alternatives = [compile_rule_object(r, language, where=f"{where}.any[{i}]", trusted=trusted, family=family)
                        for i, r in enumerate(rule.any)]
        if all(type(m) is KindMatcher for m in alternatives):
            parts.append(KindSetMatcher(frozenset(m.kind for m in alternatives)))
        else:
            parts.append(AnyMatcher(alternatives))
    if rule.not_ is not None:
        parts.append(NotMatcher(compile_rule_object(rule.not_, language, where=f"{where}.not", trusted=trusted, family=family)))
    if not parts:
        raise RuleObjectError(f"field `{where}`: empty rule object (needs pattern, kind, regex, query, "
                              "check, a relation or a composite)")
    # Cheap structural tests first, then relations, then arbitrary Python predicates: the
    # conjunction means the same whatever the order, only faster.
    parts.sort(key=lambda m: _COST.get(type(m), 2))
    return parts[0] if len(parts) == 1 else AllMatcher(parts)


_COST = {KindMatcher: 0, KindSetMatcher: 1, PatternMatcher: 0, CalleeMatcher: 0, RegexMatcher: 1, AnyMatcher: 1, AllMatcher: 1,
         NotMatcher: 2, InsideMatcher: 3, HasMatcher: 3, FollowsMatcher: 3, PrecedesMatcher: 3,
         QueryMatcher: 4, CheckMatcher: 5}


def _is_known_kind(kind: str, language: str) -> bool:
    lang = parsing.language(language)
    return lang.id_for_node_kind(kind, True) is not None or lang.id_for_node_kind(kind, False) is not None


def root_query_matcher(m: Matcher) -> QueryMatcher | None:
    """The query that drives a rule whose top level is a raw query (possibly inside `all`)."""
    if isinstance(m, QueryMatcher):
        return m
    if isinstance(m, AllMatcher):
        for part in m.parts:
            if isinstance(part, QueryMatcher):
                return part
    return None
