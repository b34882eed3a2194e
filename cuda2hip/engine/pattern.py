"""Code patterns with metavariables, matched structurally against tree-sitter nodes.

A pattern is written as code: `cudaMemcpy($DST, $$$REST)`. `$NAME` matches exactly one node,
`$$$NAME` any run of sibling nodes (possibly empty), `$_` / `$$$` match without capturing.
The pattern is parsed once with the same grammar and kept as a small pure-Python tree; a match
compares node kinds and leaf text, ignoring comments. A metavariable used twice must match the
same text both times.
"""

from __future__ import annotations

import re

import tree_sitter as ts
from msgspec import Struct

from ..lang import parse as parsing
from ..lang.lazy_regex import LazyRegex

METAVAR = LazyRegex(r"^\$(\$\$)?([A-Z_][A-Z0-9_]*)?$")
SKIP_KINDS = frozenset({"comment"})


class PatternError(ValueError):
    pass


class Capture(Struct):
    """What a metavariable matched: one node, or a run of sibling nodes for `$$$`."""

    nodes: tuple[ts.Node, ...]
    start: int
    end: int
    text: str

    @property
    def node(self) -> ts.Node | None:
        return self.nodes[0] if len(self.nodes) == 1 else None


class PNode(Struct):
    type: str
    text: str
    children: tuple["PNode", ...]
    metavar: str | None = None  # name ('' for anonymous)
    multi: bool = False


def _strip_separators(nodes: list[ts.Node]) -> list[ts.Node]:
    named = [n for n in nodes if n.is_named]
    return named if named else []


def capture(node: ts.Node, data: bytes, value: str | None = None) -> Capture:
    """A capture for a predicate to add to the match environment (`value` overrides the text,
    for message placeholders that are not source text)."""
    return Capture((node,), node.start_byte, node.end_byte,
                   data[node.start_byte:node.end_byte].decode("utf-8", errors="replace") if value is None else value)


def make_capture(nodes, data: bytes) -> Capture:
    nodes = tuple(nodes)
    core = _strip_separators(list(nodes))
    if not core:
        pos = nodes[0].start_byte if nodes else 0
        return Capture(nodes, pos, pos, "")
    start, end = core[0].start_byte, core[-1].end_byte
    return Capture(tuple(core), start, end, data[start:end].decode("utf-8", errors="replace"))


class Pattern:
    def __init__(self, code: str, language: str = "cuda", *, context: str | None = None,
                 selector: str | None = None):
        self.code = code
        self.language = language
        if selector:
            data = (context if context is not None else code).encode()
            tree = parsing.parse(language, data)
            node = _find_kind(tree.root_node, selector)
            if node is None:
                raise PatternError(f"selector {selector!r} not found in pattern context")
            if _errors_within(tree, language, node):
                raise PatternError(f"pattern context does not parse as {language} code")
        else:
            found = _parse_snippet(code, language)
            if found is None:
                raise PatternError(f"pattern does not parse as {language} code: {code!r}")
            data, node = found
        self.root = _convert(node, data)
        if self.root.metavar is not None:
            raise PatternError(f"pattern {code!r} is a lone metavariable; use `kind:` instead")
        self.literals = tuple(sorted(_literal_identifiers(self.root), key=len, reverse=True))
        self.callee = _literal_callee(self.root)

    @property
    def kind(self) -> str:
        return self.root.type

    def match(self, node: ts.Node, data: bytes, env: dict[str, Capture] | None = None
              ) -> dict[str, Capture] | None:
        caps: dict[str, Capture] = dict(env) if env else {}
        if _match_node(self.root, node, data, caps):
            return caps
        return None


def _find_kind(node: ts.Node, kind: str) -> ts.Node | None:
    if node.type == kind:
        return node
    for child in node.children:
        found = _find_kind(child, kind)
        if found is not None:
            return found
    return None


# A snippet is tried as written (top-level code), then as a statement inside a function body,
# so that both `#include <x>` / declarations and bare calls like `f($X)` parse.
_WRAPPERS = (("", ""), ("void __cuda2hip_pattern__() {\n", "\n}"))


def _parse_snippet(code: str, language: str):
    stripped = code.strip()
    variants = [stripped]
    if language == "cuda" and not stripped.endswith((";", "}")) and not stripped.startswith("#"):
        variants.append(stripped + ";")
    for prefix, suffix in _WRAPPERS:
        for variant in variants:
            data = (prefix + variant + suffix).encode()
            tree = parsing.parse(language, data)
            lo, hi = len(prefix.encode()), len(prefix.encode()) + len(variant.encode())
            node = _covering(tree.root_node, lo, hi)
            if node is None or _errors_within(tree, language, node):
                continue
            # `f($X)` without ';' is the expression, not the expression statement around it.
            if node.type == "expression_statement" and not stripped.endswith(";"):
                inner = [c for c in node.named_children if c.type not in SKIP_KINDS]
                if len(inner) == 1:
                    node = inner[0]
            return data, node
    return None


def _covering(root: ts.Node, lo: int, hi: int) -> ts.Node | None:
    """The outermost node spanning exactly the snippet's text, skipping single-child wrappers."""
    node = root
    while True:
        if node.start_byte == lo and node.end_byte == hi and node.type not in ("translation_unit", "compound_statement"):
            return node
        nxt = None
        for child in node.children:
            if child.start_byte <= lo and child.end_byte >= hi:
                nxt = child
                break
        if nxt is None:
            return None
        node = nxt


def _errors_within(tree, language: str, node: ts.Node) -> bool:
    return any(b.start_byte >= node.start_byte and b.end_byte <= node.end_byte
               for b in parsing.error_nodes(tree, language))


def _convert(node: ts.Node, data: bytes) -> PNode:
    text = data[node.start_byte:node.end_byte].decode()
    children = tuple(_convert(c, data) for c in node.children
                     if c.type not in SKIP_KINDS and not c.is_missing)
    m = METAVAR.match(text.strip()) if text.strip().startswith("$") else None
    if m and (not children or _single_leaf_chain(node)):
        return PNode(node.type, text, (), metavar=m.group(2) or "", multi=bool(m.group(1)))
    return PNode(node.type, text, children)


def _single_leaf_chain(node: ts.Node) -> bool:
    """True for wrappers like `(type_descriptor (type_identifier))` around one metavariable."""
    while node.child_count == 1:
        node = node.children[0]
    return node.child_count == 0


def _literal_callee(p: PNode) -> str | None:
    """`f` for a pattern `f(...)` whose function is a plain identifier (not a metavariable)."""
    if p.type != "call_expression" or not p.children:
        return None
    fn = p.children[0]
    if fn.metavar is None and fn.type == "identifier" and not fn.children:
        return fn.text
    return None


def _literal_identifiers(p: PNode):
    if p.metavar is not None:
        return
    if not p.children and (p.type.endswith("identifier")):
        yield p.text
    for c in p.children:
        yield from _literal_identifiers(c)


def _bind(name: str, nodes, data: bytes, caps: dict[str, Capture]) -> bool:
    cap = make_capture(nodes, data)
    if not name:
        return True
    prev = caps.get(name)
    if prev is not None:
        return prev.text == cap.text
    caps[name] = cap
    return True


def _children(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.children if c.type not in SKIP_KINDS]


def _match_node(p: PNode, node: ts.Node, data: bytes, caps: dict[str, Capture]) -> bool:
    if p.metavar is not None:
        if node.is_missing or node.type in SKIP_KINDS:
            return False
        return _bind(p.metavar, [node], data, caps)
    if p.type != node.type:
        return False
    if not p.children:
        return data[node.start_byte:node.end_byte].decode("utf-8", errors="replace") == p.text
    return _match_seq(p.children, 0, _children(node), 0, data, caps)


def _match_seq(ps, i: int, ns: list[ts.Node], j: int, data: bytes, caps: dict[str, Capture]) -> bool:
    if i == len(ps):
        return j == len(ns)
    p = ps[i]
    if p.multi:
        # Shortest run first, so a following fixed element anchors the run.
        for k in range(j, len(ns) + 1):
            saved = dict(caps)
            if _bind(p.metavar, ns[j:k], data, caps) and _match_seq(ps, i + 1, ns, k, data, caps):
                return True
            caps.clear()
            caps.update(saved)
        return False
    if j >= len(ns):
        return False
    saved = dict(caps)
    if _match_node(p, ns[j], data, caps) and _match_seq(ps, i + 1, ns, j + 1, data, caps):
        return True
    caps.clear()
    caps.update(saved)
    return False


_TEMPLATE_VAR = re.compile(r"\$(\$\$)?([A-Z_][A-Z0-9_]*)")


def expand_template(template: str, caps: dict[str, Capture], extra: dict[str, str] | None = None) -> str:
    """Replace `$NAME` / `$$$NAME` with captured text; unknown names are left as written."""

    def sub(m: re.Match) -> str:
        name = m.group(2)
        if extra and name in extra:
            return extra[name]
        cap = caps.get(name)
        return cap.text if cap is not None else m.group(0)

    return _TEMPLATE_VAR.sub(sub, template)
