"""`pattern` rule kind: a rule object (pattern / kind / query / relations) plus a message and a fix
that use the captured metavariables."""

from __future__ import annotations

import re

from ..findings import API, Edit, Severity
from ..lang.cxx.calls import CALL
from ..lang.lazy_regex import LazyRegex
from .builders import BuiltFix, Match, get_builder
from .compiled import CompiledRule, RuleCompileError, rule_kind
from .pattern import expand_template
from .rule_object import AllMatcher, HasMatcher, KindMatcher, KindSetMatcher, RuleObjectError
from .rule_object_compile import compile_rule_object, root_query_matcher

# Leaf node kinds spelled as one identifier-shaped word: the CUDA frontend can find such nodes by
# their text (see frontends/cuda.py:_visit_by_text).
_LEAF_NAME_KINDS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier"})
_WORD = LazyRegex(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Message placeholders that name the API a finding is about (the manual-work estimate counts one
# port per rule and API: report/effort.py), in order of preference.
API_CAPTURES = ("NAME", "FN", "HEADER", "FLAG", "PROGRAM", "VAR", "PTX", "COND")


def api_capture(message: str) -> str | None:
    """The first of API_CAPTURES the message uses as `$X`."""
    used = set(re.findall(r"\$([A-Z_][A-Z0-9_]*)", message))
    return next((name for name in API_CAPTURES if name in used), None)


def indent_continuation(text: str, indent: str) -> str:
    """Indent every line after the first, so a multi-line replacement lines up with its target."""
    if "\n" not in text:
        return text
    first, *rest = text.split("\n")
    return "\n".join([first] + [(indent + line) if line else line for line in rest])


def _without_kind_tests(matcher, kinds):
    """`matcher` as `visit` needs it: every node visited is of one of `kinds` (the frontends
    dispatch by kind), so top-level `kind:` tests that every such node passes are dropped (e.g.
    the `any:` of four kinds in front of HIP405's predicate)."""
    if type(matcher) is not AllMatcher:
        return matcher
    rest = [p for p in matcher.parts if not (type(p) in (KindMatcher, KindSetMatcher) and kinds <= p.kinds)]
    if len(rest) == len(matcher.parts):
        return matcher
    return rest[0] if len(rest) == 1 else AllMatcher(rest)


@rule_kind("pattern")
class PatternRule(CompiledRule):
    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if rule.rule is None:
            raise RuleCompileError("field `rule`: a pattern rule needs a rule object")
        try:
            self.matcher = compile_rule_object(rule.rule, rule.language, trusted=rule.builtin, family=rule.family)
            self.constraints = {
                name: compile_rule_object(obj, rule.language, where=f"constraints.{name}",
                                          trusted=rule.builtin, family=rule.family)
                for name, obj in (rule.constraints or {}).items()
            }
        except RuleObjectError as exc:
            raise RuleCompileError(str(exc)) from None
        self.query = root_query_matcher(self.matcher)
        if self.query is not None:
            self.whole_file = True
            self.kinds = frozenset()
        elif self.matcher.kinds is None:
            raise RuleCompileError("field `rule`: the top level needs a `pattern`, `kind` or `query` "
                                   "(it decides which nodes the rule visits)")
        else:
            self.kinds = self.matcher.kinds
        self.literals = self.matcher.literals
        self.alternatives = self.matcher.alternatives
        if self.kinds == {CALL} and self.matcher.callees is not None:
            self.callees = self.matcher.callees
        self.api = api_capture(rule.message)
        self.node_matcher = self.matcher if self.query is not None else _without_kind_tests(self.matcher, self.kinds)
        spellings = self.matcher.spellings
        if (self.query is None and rule.language == "cuda" and spellings is not None
                and self.kinds and self.kinds <= _LEAF_NAME_KINDS
                and all(_WORD.fullmatch(t) for t in spellings)):
            # e.g. `pattern: cudaStreamDefault`: only identifiers spelled so can match, so the
            # frontend finds those by their text (`by_text`) instead of handing the rule every
            # identifier of the file.
            self.by_text = True
            self._spellings = frozenset(t.encode() for t in spellings)
        matcher = self.node_matcher
        if (self.query is None and not self.by_text and self.callees is None and len(self.kinds) == 1
                and type(matcher) is HasMatcher and matcher.stop == "neighbor"
                and type(matcher.inner) is KindMatcher):
            # e.g. HIP200 (`kind: call_expression` + `has: {kind: kernel_call_syntax}`): visited
            # from the children of that kind (few) instead of from every node of the rule's kind.
            self._parent_kind = next(iter(self.kinds))
            self._child_kind = matcher.inner.kind
            self.kinds = frozenset({self._child_kind})
            self.visit = self._visit_parent
        fix = rule.fix
        self.template = fix.template if fix else None
        self.target = fix.target if fix else None
        self.builder = None
        if fix and fix.builder:
            try:
                self.builder = get_builder(fix.builder, rule.family)
            except KeyError as exc:
                raise RuleCompileError(f"field `fix.builder`: {exc.args[0]}") from None
        if fix and not (fix.template is not None or fix.builder):
            raise RuleCompileError("field `fix`: needs a `template` or a `builder`")

    def wanted_texts(self, words):
        return self._spellings & words

    def visit(self, node, ctx):
        env = self.node_matcher.match(node, {}, ctx)
        if env is not None:
            self.emit(node, env, ctx)

    def _visit_parent(self, node, ctx):
        """`node` is of the child kind: the parent matches (once, from its first such child)."""
        parent = node.parent
        if parent is None or parent.type != self._parent_kind:
            return
        kind = self._child_kind
        for child in parent.named_children:
            if child.type == kind:
                if child == node:
                    self.emit(parent, {}, ctx)
                return

    def run_file(self, ctx):
        for node, env in self.query.matches_in(ctx.tree.root_node, ctx):
            out = self.matcher.match(node, env, ctx)
            if out is not None:
                self.emit(node, out, ctx)

    def emit(self, node, env, ctx) -> None:
        for name, constraint in self.constraints.items():
            cap = env.get(name)
            if cap is None or cap.node is None or constraint.match(cap.node, env, ctx) is None:
                return
        message = expand_template(self.rule.message, env)
        start, end = node.start_byte, node.end_byte
        edits = None
        applicability = None
        description = self.rule.fix.description or "" if self.rule.fix else ""
        effort = None
        data = None
        severity = None
        if self.builder is not None:
            built: BuiltFix | None = self.builder(Match(node, env, start, end), ctx, self)
            if built is False:
                return  # the builder's analysis says this match is not a finding
            if built is not None:
                edits = built.edits
                applicability = built.applicability
                message = built.message or message
                description = built.description or description
                effort = built.effort
                data = built.data or None
                severity = Severity[built.severity.upper()] if built.severity else None
        elif self.template is not None:
            tstart, tend = start, end
            if self.target:
                cap = env.get(self.target)
                if cap is None:
                    raise RuleCompileError(f"{self.code}: fix.target ${self.target} was not captured")
                tstart, tend = cap.start, cap.end
            text = expand_template(self.template, env)
            text = indent_continuation(text, ctx.source.indentation_at(ctx.base + tstart))
            edits = [Edit(tstart, tend, text)]
        cap = env.get(self.api) if self.api else None
        if cap is not None:
            data = {**(data or {}), API: " ".join(cap.text.split())}
        ctx.report(self, start, end, message, edits=edits, applicability=applicability,
                   description=description, effort=effort, data=data, severity=severity)
