"""Shared frontend of the build-file languages (CMake, Makefiles): parse once with the
language's tree-sitter grammar, collect every node kind a rule wants with one query, dispatch,
then settle `# cuda2hip: ignore[...]` comments and report parse recovery like the CUDA frontend.
"""

from __future__ import annotations

from functools import lru_cache

import tree_sitter as ts

from ...lang import parse as parsing
from ...lang.source import SourceText
from ...lang.suppress import parse_directives
from ...settings import Settings
from ..context import FileContext
from ..diagnostics import report_parse_recovery, report_source_encoding, settle_suppressions
from ..engine import RuleSet
from .base import Frontend, LintResult


@lru_cache(maxsize=64)
def _dispatch_query(language: str, kinds: frozenset[str], comment_kinds: tuple[str, ...]) -> ts.Query:
    lang = parsing.language(language)
    parts = []
    named = sorted(k for k in kinds if lang.id_for_node_kind(k, True) is not None)
    if named:
        parts.append("[" + " ".join(f"({k})" for k in named) + "] @node")
    if comment_kinds:
        parts.append("[" + " ".join(f"({k})" for k in comment_kinds) + "] @comment")
    return ts.Query(lang, "\n".join(parts) or "(ERROR) @unused")


class BuildFrontend(Frontend):
    language = ""
    comment_kinds: tuple[str, ...] = ()

    def lint(self, source: SourceText, rules: RuleSet, settings: Settings, *,
             validate: bool = True) -> LintResult:
        # Build files are recognised by name, and tree-sitter recovers from what it cannot
        # parse (reported as parse recovery), so there is nothing to validate up front.
        tree = parsing.parse(self.language, source.data)
        ctx = FileContext(source=source, tree=tree, language=self.language, settings=settings)
        active = rules.active(source.data)
        query = _dispatch_query(self.language, frozenset(active.dispatch), self.comment_kinds)
        caps = ts.QueryCursor(query).captures(tree.root_node)
        get = active.dispatch.get
        for node in caps.get("node", ()):
            for rule in get(node.type, ()):
                rule.visit(node, ctx)
        for rule in active.whole_file_rules:
            rule.run_file(ctx)
        errors = parsing.error_nodes(tree, self.language)
        report_parse_recovery(ctx, rules, [e.start_byte for e in errors])
        report_source_encoding(ctx, rules)
        if b"cuda2hip:" in source.data:
            comments = [(c.start_byte, c.end_byte) for c in caps.get("comment", ())]
            settle_suppressions(ctx, rules, parse_directives(comments, source))
        ctx.findings.sort(key=lambda f: f.sort_key)
        return LintResult(ctx.findings, parse_errors=len(errors),
                          error_lines=sorted({source.position(e.start_byte)[0] for e in errors}))

    def parse_errors(self, source: SourceText, rules: RuleSet, settings: Settings) -> int:
        return parsing.error_count(parsing.parse(self.language, source.data), self.language)
