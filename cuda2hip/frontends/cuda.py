"""CUDA / C++ frontend: parse once with tree-sitter-cuda, collect every node any rule wants with
one query, and dispatch each node to the rules registered for its kind.

Macro bodies (`#define` values) are opaque text to the grammar. Their identifier tokens go to
the token rules (renames), and the body is re-parsed as a fragment so that pattern rules see
launches and calls inside macros too; fragment offsets are mapped back into the file.
"""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter as ts

from .. import parse as parsing
from ..match.context import FileContext
from ..match.diagnostics import report_parse_recovery, settle_suppressions
from ..match.engine import RuleSet
from ..settings import Settings
from ..source import SourceError, SourceText
from ..suppress import parse_directives
from .base import Frontend, LintResult

LANGUAGE = "cuda"
MACRO_PARENTS = frozenset({"preproc_def", "preproc_function_def"})
# Identifier tokens of a macro body; string/char literals and comments are skipped whole.
_MACRO_TOKENS = re.compile(
    rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|(?P<id>[A-Za-z_$][A-Za-z0-9_$]*)',
    re.DOTALL,
)


@lru_cache(maxsize=64)
def _dispatch_query(kinds: frozenset[str], with_comments: bool) -> ts.Query:
    lang = parsing.language(LANGUAGE)
    parts = []
    named = sorted(k for k in kinds if lang.id_for_node_kind(k, True) is not None)
    if named:
        parts.append("[" + " ".join(f"({k})" for k in named) + "] @node")
    parts.append("(preproc_arg) @macro")
    if with_comments:
        parts.append("(comment) @comment")
    return ts.Query(lang, "\n".join(parts))


def run_rules(ctx: FileContext, rules: RuleSet, *, with_comments: bool = False) -> list[ts.Node]:
    """Run node-kind rules over ctx.tree; returns macro-body nodes and (optionally) comments."""
    dispatch = rules.dispatch
    query = _dispatch_query(frozenset(dispatch), with_comments)
    caps = ts.QueryCursor(query).captures(ctx.tree.root_node)
    get = dispatch.get
    for node in caps.get("node", ()):
        for rule in get(node.type, ()):
            rule.visit(node, ctx)
    for rule in rules.whole_file_rules:
        rule.run_file(ctx)
    ctx.cache["_macros"] = [m for m in caps.get("macro", []) if m.parent is not None
                            and m.parent.type in MACRO_PARENTS]
    return caps.get("comment", [])


def run_macro_bodies(ctx: FileContext, rules: RuleSet) -> None:
    macros = ctx.cache.get("_macros", [])
    if not macros:
        return
    token_rules = rules.token_rules
    fragment_rules = None
    for body in macros:
        start = body.start_byte
        text = ctx.data[start:body.end_byte]
        if token_rules:
            for m in _MACRO_TOKENS.finditer(text):
                if m.group("id") is None:
                    continue
                name = m.group("id")
                for rule in token_rules:
                    rule.token(start + m.start(), start + m.end(), name, ctx)
        if fragment_rules is None:
            fragment_rules = RuleSet([r for r in rules.rules if r.applies_to_fragments()],
                                     rules.known_codes, rules.selected_codes)
        if not fragment_rules.rules:
            continue
        tree = parsing.parse(LANGUAGE, text)
        frag = ctx.fragment(body, tree)
        run_rules(frag, fragment_rules)


# Share of a file's non-blank bytes that may sit directly in ERROR nodes before the file is
# taken for something that is not C/C++/CUDA at all (prose, YAML, a shell script). Real CUDA
# with recoverable errors stays far below: tree-sitter keeps parsing the code inside an ERROR.
UNPARSEABLE_SHARE = 0.5


def unparseable_share(tree: ts.Tree, data: bytes) -> float:
    """Bytes of tokens that tree-sitter could not place in any construct / non-blank bytes."""
    if not tree.root_node.has_error:
        return 0.0
    total = len(data) - sum(data.count(ws) for ws in (b" ", b"\t", b"\n", b"\r"))
    if total <= 0:
        return 0.0
    bad = 0
    for err in parsing.error_nodes(tree, LANGUAGE):
        if err.type != "ERROR":
            continue
        bad += sum(c.end_byte - c.start_byte for c in err.children
                   if c.child_count == 0 and c.type != "comment")
    return bad / total


class CudaFrontend(Frontend):
    language = LANGUAGE

    def lint(self, source: SourceText, rules: RuleSet, settings: Settings, *,
             validate: bool = True) -> LintResult:
        tree = parsing.parse(LANGUAGE, source.data)
        share = unparseable_share(tree, source.data) if validate else 0.0
        if share >= UNPARSEABLE_SHARE:
            raise SourceError(source.path, f"does not parse as C/C++/CUDA ({share:.0%} of it fits no "
                                           "construct); left untouched")
        ctx = FileContext(source=source, tree=tree, language=LANGUAGE, settings=settings)
        active = rules.active(source.data)
        has_directives = b"cuda2hip:" in source.data
        comments = run_rules(ctx, active, with_comments=has_directives)
        run_macro_bodies(ctx, active)
        errors = parsing.error_nodes(tree, LANGUAGE)
        report_parse_recovery(ctx, rules, [e.start_byte for e in errors])
        # Fragments may report the same place twice (e.g. a body seen as tokens and as a tree).
        ctx.findings[:] = _dedupe(ctx.findings)
        if has_directives:
            directives = parse_directives([(c.start_byte, c.end_byte) for c in comments], source)
            settle_suppressions(ctx, rules, directives)
        ctx.findings.sort(key=lambda f: f.sort_key)
        return LintResult(ctx.findings, parse_errors=len(errors),
                          error_lines=sorted({source.position(e.start_byte)[0] for e in errors}))

    def parse_errors(self, source: SourceText) -> int:
        return parsing.error_count(parsing.parse(LANGUAGE, source.data), LANGUAGE)


def _dedupe(findings):
    seen = set()
    out = []
    for f in findings:
        key = (f.code, f.start, f.end, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out
