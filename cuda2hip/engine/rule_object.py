"""Evaluate ast-grep style rule objects (pattern / kind / regex / query / check, inside / has /
follows / precedes with stopBy, all / any / not) against tree-sitter nodes: one `Matcher` class
each. rule_object_compile.py builds them from a rule's `rule:` mapping."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import tree_sitter as ts

from ..lang import parse as parsing
from ..lang.cxx.calls import CALL, callee_name
from ..rulebook.schema import CheckSpec
from .pattern import Capture, Pattern, make_capture
from .predicates import get_predicate, predicate_callees, predicate_requires

if TYPE_CHECKING:
    from .context import FileContext

Env = dict[str, Capture]


class RuleObjectError(ValueError):
    pass


class Matcher:
    """A compiled rule object. `match` returns the (possibly extended) environment or None."""

    # node kinds this matcher can match at all, or None when any kind may match
    kinds: frozenset[str] | None = None
    # identifiers that must occur in a file for a match to be possible (a cheap pre-filter)
    literals: tuple[str, ...] = ()
    # or, where one of several spellings will do (`any:`), groups of identifiers one of which
    # must occur in full; None: no such requirement is known
    alternatives: tuple[tuple[str, ...], ...] | None = None
    # for matchers of calls only: the callee names that can match at all (None: any)
    callees: frozenset[str] | None = None
    # the texts a matched node can have at all, when there are few (a pattern that is one
    # identifier), else None
    spellings: frozenset[str] | None = None

    def match(self, node: ts.Node, env: Env, ctx: "FileContext") -> Env | None:
        raise NotImplementedError


def _groups(names) -> tuple[tuple[str, ...], ...]:
    return tuple((n,) for n in sorted(names))


class PatternMatcher(Matcher):
    def __init__(self, pattern: Pattern):
        self.pattern = pattern
        self.kinds = frozenset({pattern.kind})
        self.literals = pattern.literals
        self.alternatives = (pattern.literals,) if pattern.literals else None
        name = pattern.callee
        self.callees = frozenset({name}) if name else None
        root = pattern.root
        if not root.children and root.metavar is None:
            self.spellings = frozenset({root.text})

    def match(self, node, env, ctx):
        return self.pattern.match(node, ctx.data, env)


class CalleeMatcher(Matcher):
    """`callee: [names]`: a call whose function, as written (`f`, `ns::f`, `obj.f`, `f<T>`),
    ends in one of the names."""

    kinds = frozenset({CALL})

    def __init__(self, names: list[str]):
        if not names:
            raise RuleObjectError("callee: needs at least one name")
        self.callees = frozenset(names)
        self.alternatives = _groups(self.callees)

    def match(self, node, env, ctx):
        return env if node.type == CALL and callee_name(node, ctx.data) in self.callees else None


class KindMatcher(Matcher):
    def __init__(self, kind: str):
        self.kind = kind
        self.kinds = frozenset({kind})

    def match(self, node, env, ctx):
        return env if node.type == self.kind else None


class KindSetMatcher(Matcher):
    """`any:` of plain `kind:` tests, as one set look-up."""

    def __init__(self, kinds: frozenset[str]):
        self.kinds = kinds

    def match(self, node, env, ctx):
        return env if node.type in self.kinds else None


class RegexMatcher(Matcher):
    def __init__(self, regex: str, trusted: bool = True):
        from .rule_regex import UnsafeRegexError, compile_rule_regex

        try:
            self.regex = compile_rule_regex(regex, trusted=trusted)
        except UnsafeRegexError as exc:
            raise RuleObjectError(str(exc)) from None

    def match(self, node, env, ctx):
        return env if self.regex.search(ctx.node_text(node)) else None


class QueryMatcher(Matcher):
    """A raw tree-sitter query; the node captured as `@match` (else the first capture) is the
    match, other captures become metavariables (`@stream` -> `$STREAM`)."""

    def __init__(self, source: str, language: str, trusted: bool = True):
        if not trusted:
            from .rule_regex import UnsafeRegexError, check_query_regexes

            try:
                check_query_regexes(source)
            except UnsafeRegexError as exc:
                raise RuleObjectError(f"query: {exc}") from None
        try:
            self.query = ts.Query(parsing.language(language), source)
        except Exception as exc:  # tree_sitter.QueryError
            raise RuleObjectError(f"invalid tree-sitter query: {exc}") from None
        self.source = source

    def matches_in(self, root: ts.Node, ctx) -> Iterator[tuple[ts.Node, Env]]:
        for _, caps in ts.QueryCursor(self.query).matches(root):
            target = caps.get("match") or next(iter(caps.values()), None)
            if not target:
                continue
            env = {name.upper(): make_capture(nodes, ctx.data)
                   for name, nodes in caps.items() if name != "match"}
            yield target[0], env

    def match(self, node, env, ctx):
        for target, caps in self.matches_in(node, ctx):
            if target.id == node.id:
                merged = dict(env)
                merged.update(caps)
                return merged
        return None


class CheckMatcher(Matcher):
    def __init__(self, spec: str | CheckSpec, family: str = ""):
        name, args = (spec, {}) if isinstance(spec, str) else (spec.name, dict(spec.args))
        self.fn = get_predicate(name, family)
        self.args = args
        self.name = name
        self.callees = predicate_callees(name)
        if self.callees is not None:
            self.kinds = frozenset({CALL})
            self.alternatives = _groups(self.callees)
        requires = predicate_requires(name)
        if requires is not None:
            self.alternatives = _groups(requires)

    def match(self, node, env, ctx):
        result = self.fn(node, env, ctx, self.args)
        if result is True:
            return env
        if isinstance(result, dict):
            merged = dict(env)
            merged.update(result)
            return merged
        return None


class AllMatcher(Matcher):
    def __init__(self, parts: list[Matcher]):
        self.parts = parts
        kinds = [p.kinds for p in parts if p.kinds is not None]
        self.kinds = frozenset.intersection(*kinds) if kinds else None
        self.literals = tuple(x for p in parts for x in p.literals)
        # every part must match, so the requirement of any one of them holds
        self.alternatives = next((p.alternatives for p in parts if p.alternatives is not None), None)
        names = [p.callees for p in parts if p.callees is not None]
        self.callees = frozenset.intersection(*names) if names else None
        texts = [p.spellings for p in parts if p.spellings is not None]
        self.spellings = frozenset.intersection(*texts) if texts else None

    def match(self, node, env, ctx):
        for part in self.parts:
            env = part.match(node, env, ctx)
            if env is None:
                return None
        return env


class AnyMatcher(Matcher):
    def __init__(self, parts: list[Matcher]):
        self.parts = parts
        kinds = [p.kinds for p in parts]
        self.kinds = None if any(k is None for k in kinds) else frozenset().union(*kinds)
        # one part must match: the file holds the identifiers of one of them
        groups = [p.alternatives for p in parts]
        self.alternatives = None if any(g is None for g in groups) else tuple(x for g in groups for x in g)
        names = [p.callees for p in parts]
        self.callees = None if any(n is None for n in names) else frozenset().union(*names)
        texts = [p.spellings for p in parts]
        self.spellings = None if any(t is None for t in texts) else frozenset().union(*texts)

    def match(self, node, env, ctx):
        for part in self.parts:
            out = part.match(node, env, ctx)
            if out is not None:
                return out
        return None


class NotMatcher(Matcher):
    def __init__(self, inner: Matcher):
        self.inner = inner

    def match(self, node, env, ctx):
        return env if self.inner.match(node, env, ctx) is None else None


class RelationalMatcher(Matcher):
    def __init__(self, inner: Matcher, stop: str | Matcher):
        self.inner = inner
        self.stop = stop

    def candidates(self, node: ts.Node) -> Iterator[ts.Node]:
        raise NotImplementedError

    def match(self, node, env, ctx):
        for cand in self.candidates(node):
            out = self.inner.match(cand, env, ctx)
            if out is not None:
                return out
            if isinstance(self.stop, Matcher) and self.stop.match(cand, env, ctx) is not None:
                return None
        return None


class InsideMatcher(RelationalMatcher):
    def candidates(self, node):
        parent = node.parent
        while parent is not None:
            yield parent
            if self.stop == "neighbor":
                return
            parent = parent.parent


class HasMatcher(RelationalMatcher):
    def __init__(self, inner: Matcher, stop: str | Matcher):
        super().__init__(inner, stop)
        if stop == "neighbor" and type(inner) is KindMatcher:
            self.match = self._has_child_of_kind  # e.g. `has: {kind: kernel_call_syntax}`

    def _has_child_of_kind(self, node, env, ctx):
        kind = self.inner.kind
        for child in node.named_children:
            if child.type == kind:
                return env
        return None

    def candidates(self, node):
        if self.stop == "neighbor":
            yield from (c for c in node.named_children)
            return
        stack = list(reversed(node.named_children))
        while stack:
            cur = stack.pop()
            yield cur
            stack.extend(reversed(cur.named_children))

    def match(self, node, env, ctx):
        if not isinstance(self.stop, Matcher):
            return super().match(node, env, ctx)
        # With a stop rule, do not descend below a node the stop rule matches.
        stack = list(reversed(node.named_children))
        while stack:
            cur = stack.pop()
            out = self.inner.match(cur, env, ctx)
            if out is not None:
                return out
            if self.stop.match(cur, env, ctx) is None:
                stack.extend(reversed(cur.named_children))
        return None


class FollowsMatcher(RelationalMatcher):
    def candidates(self, node):
        sib = node.prev_named_sibling
        while sib is not None:
            if sib.type != "comment":
                yield sib
                if self.stop == "neighbor":
                    return
            sib = sib.prev_named_sibling


class PrecedesMatcher(RelationalMatcher):
    def candidates(self, node):
        sib = node.next_named_sibling
        while sib is not None:
            if sib.type != "comment":
                yield sib
                if self.stop == "neighbor":
                    return
            sib = sib.next_named_sibling
