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

from ...lang import parse as parsing
from ...lang.cxx import definitions as defined_names
from ...lang.cxx.foreign_text import foreign_text_reason
from ...lang.lazy_regex import LazyRegex
from ...lang.source import SourceError, SourceText
from ...lang.suppress import parse_directives
from ...settings import Settings
from ..context import FileContext
from ..diagnostics import report_parse_recovery, report_source_encoding, settle_suppressions
from ..engine import RuleSet
from .base import Frontend, LintResult

LANGUAGE = "cuda"
_WORDS = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")
MACRO_PARENTS = frozenset({"preproc_def", "preproc_function_def"})
# Identifier tokens of a macro body; string/char literals and comments are skipped whole.
_MACRO_TOKENS = LazyRegex(
    rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|(?P<id>[A-Za-z_$][A-Za-z0-9_$]*)',
    re.DOTALL,
)


@lru_cache(maxsize=64)
def _named_kinds(kinds: frozenset[str]) -> frozenset[str]:
    lang = parsing.language(LANGUAGE)
    return frozenset(k for k in kinds if lang.id_for_node_kind(k, True) is not None)


@lru_cache(maxsize=64)
def _dispatch_query(kinds: frozenset[str], with_comments: bool, with_definitions: bool = False) -> ts.Query:
    lang = parsing.language(LANGUAGE)
    parts = []
    named = sorted(_named_kinds(kinds))
    if named:
        parts.append("[" + " ".join(f"({k})" for k in named) + "] @node")
    parts.append("(preproc_arg) @macro")
    if with_comments:
        parts.append("(comment) @comment")
    if with_definitions:
        # A query's cost is mostly its pass over the tree: the file's definitions (see
        # defined_names) come with the dispatch captures almost for free.
        parts.append(defined_names.PATTERNS)
    return ts.Query(lang, "\n".join(parts))


# Node kinds the dispatch query of a many-file run captures (`CudaFrontend.prepare`): every kind
# the run's rules visit. Files keep different subsets of the rules (`RuleSet.active`); one query
# for all of them is built once (a query costs tens of milliseconds to build, parsing a typical
# file a few) and captures nodes no rule of the file visits, which the dispatch skips.
_RUN_KINDS: frozenset[str] | None = None


_BUILT_KINDS: list[frozenset[str]] = []  # the kinds of the dispatch queries built so far


def _query_kinds(kinds: frozenset[str]) -> frozenset[str]:
    """The kinds of the dispatch query that serves `kinds`: the run's (`_RUN_KINDS`), else one
    built before that holds them (a file's macro bodies want a subset of its kinds), else all
    the kinds asked for so far (the headers a one-file check reads keep other subsets)."""
    if _RUN_KINDS is not None and kinds <= _RUN_KINDS:
        return _RUN_KINDS
    for built in _BUILT_KINDS:
        if kinds <= built:
            return built
    union = kinds.union(*_BUILT_KINDS)
    _BUILT_KINDS.append(union)
    return union


def _walk(root: ts.Node, kinds: frozenset[str], with_comments: bool) -> dict[str, list[ts.Node]]:
    """What `_dispatch_query` captures, by walking the tree (preorder = the query's order)."""
    nodes: list[ts.Node] = []
    macros: list[ts.Node] = []
    comments: list[ts.Node] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.is_named:
            kind = node.type
            if kind in kinds:
                nodes.append(node)
            if kind == "preproc_arg":
                macros.append(node)
            elif with_comments and kind == "comment":
                comments.append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return {"node": nodes, "macro": macros, "comment": comments}


# findall builds a list of every identifier token before the set keeps the distinct ones:
# ~100 MB of short-lived bytes objects for a 16 MB file. Big files go in slices of this size.
WORDS_SLICE = 1 << 20


def distinct_words(data: bytes) -> set[bytes]:
    """The identifier-shaped words of `data`."""
    if len(data) <= WORDS_SLICE:
        return set(_WORDS.findall(data))
    words: set[bytes] = set()
    start = 0
    while start < len(data):
        end = start + WORDS_SLICE
        m = _NOT_WORD.search(data, end)  # a slice ends where no word goes on
        end = len(data) if m is None else m.start()
        words.update(_WORDS.findall(data, start, end))
        start = end
    return words


_NOT_WORD = LazyRegex(rb"[^A-Za-z0-9_$]")


def _document_order(node: ts.Node):
    return (node.start_byte, -node.end_byte, node.type)


def capture(ctx: FileContext, kinds: frozenset[str], with_comments: bool) -> dict[str, list[ts.Node]]:
    """Nodes of `kinds`, macro bodies and (optionally) comments of ctx.tree, in document order
    (outer nodes first), whichever way they were found: a rule sees the same sequence in a
    one-file run and in a run over a whole tree."""
    if parsing.walk_instead_of_query("dispatch", len(ctx.data), ctx.tree.root_node):  # see parse.py
        found = _walk(ctx.tree.root_node, _named_kinds(kinds), with_comments)
    else:
        # One query captures comments and the nodes naming the file's definitions too (kept for
        # the whole file, not a macro body): building a query costs ~50 ms, a capture of a
        # typical file about a millisecond.
        found = ts.QueryCursor(_dispatch_query(_query_kinds(kinds), True, True)).captures(ctx.tree.root_node)
        definitions = found.pop(defined_names.CAPTURE, [])
        if ctx.parent is None:
            ctx.cache[defined_names.NODES_KEY] = definitions
        if not with_comments:
            found.pop("comment", None)
    for nodes in found.values():
        nodes.sort(key=_document_order)  # in place: a copy costs much on a huge file
    return found


def run_rules(ctx: FileContext, rules: RuleSet, *, with_comments: bool = False,
              words: set[bytes] | None = None) -> list[ts.Node]:
    """Run node-kind rules over ctx.tree; returns macro-body nodes and (optionally) comments.
    `words`: the identifier-shaped words of ctx.data, when the caller has them."""
    dispatch = rules.dispatch
    caps = capture(ctx, rules.dispatch_kinds, with_comments)
    get = dispatch.get
    for node in caps.get("node", ()):
        for rule in get(node.type, ()):
            rule.visit(node, ctx)
    if rules.text_visitors:
        _visit_by_text(ctx, rules.text_visitors, words)
    for rule in rules.whole_file_rules:
        rule.run_file(ctx)
    ctx.cache["_macros"] = [m for m in caps.get("macro", []) if m.parent is not None
                            and m.parent.type in MACRO_PARENTS]
    return caps.get("comment", [])


def _visit_by_text(ctx: FileContext, visitors: list, words: set[bytes] | None = None) -> None:
    """Hand `by_text` visitors the nodes spelled as one of the words they want: take the set of
    identifier-shaped words of the file, let each visitor pick its words, then visit each
    occurrence that is exactly a node of a kind the visitor wants (so words in comments,
    strings and macro bodies never count). Much cheaper than handing every identifier node of
    the file to the name tables."""
    data = ctx.data
    if words is None:
        words = distinct_words(data)
    wanted = [(visitor, sorted(visitor.wanted_texts(words))) for visitor in visitors]
    # visitors (rename and unmapped tables) often want the same words: found once
    spelled = _nodes_spelled(ctx.tree.root_node, data, {w for _, ws in wanted for w in ws})
    for visitor, visitor_words in wanted:
        kinds = visitor.kinds
        for word in visitor_words:
            for node in spelled[word]:
                if node.type in kinds:
                    visitor.visit(node, ctx)


def _nodes_spelled(root: ts.Node, data: bytes, words: set[bytes]) -> dict[bytes, list[ts.Node]]:
    """word -> the nodes that are exactly that word, in document order. The occurrences of all
    the words are located in one forward pass of a tree cursor (from one to the next it climbs
    only as far as needed, then descends), so the cost does not grow with depth per occurrence:
    a lookup from the root for each made a 100,000-term expression quadratic."""
    ordered = sorted(words)
    # An occurrence is one int, start * n + the word's index (a huge file has millions).
    n = len(ordered)
    hits = []
    for i, word in enumerate(ordered):
        size = len(word)
        start = data.find(word)
        while start != -1:
            hits.append(start * n + i)
            start = data.find(word, start + size)
    hits.sort()
    out: dict[bytes, list[ts.Node]] = {w: [] for w in ordered}
    cursor = root.walk()
    for hit in hits:
        start, i = divmod(hit, n)
        word = ordered[i]
        end = start + len(word)
        node = _smallest_holding(cursor, start, end)
        if node is not None and node.start_byte == start and node.end_byte == end:
            out[word].append(node)
    return out


def _smallest_holding(cursor: ts.TreeCursor, start: int, end: int) -> ts.Node | None:
    """The smallest node holding bytes [start, end) (what `descendant_for_byte_range` gives),
    moving `cursor` there from where the previous, earlier range left it."""
    node = cursor.node
    while not (node.start_byte <= start and end <= node.end_byte):
        if node.end_byte <= start and cursor.goto_next_sibling():
            node = cursor.node
        elif cursor.goto_parent():
            node = cursor.node
        else:
            return None
    while cursor.goto_first_child_for_byte(start) is not None:
        child = cursor.node
        if not (child.start_byte <= start and end <= child.end_byte):
            cursor.goto_parent()
            break
        node = child
    return node


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
            fragment_rules = rules.fragment_rules
        if not fragment_rules.rules:
            continue
        tree = parsing.parse(LANGUAGE, text)
        frag = ctx.fragment(body, tree)
        run_rules(frag, fragment_rules)


class CudaFrontend(Frontend):
    language = LANGUAGE

    def prepare(self, rules: RuleSet) -> None:
        global _RUN_KINDS
        _RUN_KINDS = rules.dispatch_kinds | rules.fragment_rules.dispatch_kinds
        _dispatch_query(_RUN_KINDS, True, True)
        # The other queries a many-file run builds (a header's definitions, thread-taint's
        # nodes), built once here rather than in each worker process (~15-50 ms each).
        from ...lang.cxx import thread_taint
        from ...lang.cxx.definitions import _query

        _query()
        thread_taint.prepare()

    def lint(self, source: SourceText, rules: RuleSet, settings: Settings, *,
             validate: bool = True) -> LintResult:
        tree = parsing.parse_source(LANGUAGE, source)
        errors = parsing.error_nodes(tree, LANGUAGE)
        error_lines = sorted({source.position(e.start_byte)[0] for e in errors})
        if validate:
            reason = foreign_text_reason(source.data, errors, error_lines)
            if reason is not None:
                raise SourceError(source.path, reason)
        ctx = FileContext(source=source, tree=tree, language=LANGUAGE, settings=settings)
        words = ctx.cache["_words"] = distinct_words(source.data)
        active = rules.active(source.data, words)
        has_directives = b"cuda2hip:" in source.data
        comments = run_rules(ctx, active, with_comments=has_directives, words=words)
        run_macro_bodies(ctx, active)
        report_parse_recovery(ctx, rules, [e.start_byte for e in errors])
        report_source_encoding(ctx, rules)
        # Fragments may report the same place twice (e.g. a body seen as tokens and as a tree).
        ctx.findings[:] = rules.drop_in_skipped_branches(rules.drop_superseded(_dedupe(ctx.findings)), tree,
                                                         source.data)
        if has_directives:
            directives = parse_directives([(c.start_byte, c.end_byte) for c in comments], source)
            settle_suppressions(ctx, rules, directives)
        ctx.findings.sort(key=lambda f: f.sort_key)
        return LintResult(ctx.findings, parse_errors=len(errors), error_lines=error_lines, tree=tree)

    def parse_errors(self, source: SourceText, rules: RuleSet, settings: Settings) -> int:
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
