"""Small tree-sitter-cuda helpers the semantic rules share: call names and arguments, the
enclosing function, declarations in scope. (Thread-index dependence: thread_taint.py.)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

import tree_sitter as ts

from .calls import callee_node

FUNCTION_KINDS = frozenset({"function_definition", "lambda_expression"})
# the nodes that name something: where a CUDA name is used (renames look only here, never in
# comments or string literals)
IDENTIFIER_KINDS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier"})
INT_LITERAL = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)$")


def text(node: ts.Node | None, data: bytes) -> str:
    if node is None:
        return ""
    return data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def named(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.named_children if c.type != "comment"]


def callee(call: ts.Node) -> ts.Node | None:
    """The node naming the called function: `f`, `ns::f` -> `f`, `obj.f` -> `f`, `f<T>` -> `f`."""
    return callee_node(call)


def callee_name(call: ts.Node, data: bytes) -> str:
    return text(callee(call), data)


def call_args(call: ts.Node) -> list[ts.Node]:
    args = call.child_by_field_name("arguments")
    return named(args) if args is not None else []


def launch_config(call: ts.Node) -> list[ts.Node] | None:
    """The `<<<...>>>` arguments of a kernel launch, or None when `call` is not a launch."""
    for c in call.children:
        if c.type == "kernel_call_syntax":
            return named(c)
    return None


def enclosing_function(node: ts.Node) -> ts.Node | None:
    cur = node.parent
    while cur is not None:
        if cur.type in FUNCTION_KINDS:
            return cur
        cur = cur.parent
    return None


def is_device_function(fn: ts.Node | None, data: bytes) -> bool:
    """`fn` runs on the GPU only: `__global__`, or `__device__` without `__host__`."""
    if fn is None or fn.type != "function_definition":
        return False
    words = {text(c, data) for c in fn.children if c.type != "compound_statement"}
    return "__global__" in words or ("__device__" in words and "__host__" not in words)


def function_body(fn: ts.Node) -> ts.Node | None:
    return fn.child_by_field_name("body")


def walk(node: ts.Node) -> Iterator[ts.Node]:
    """Named descendants of `node` (itself included), in document order."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.is_named:
            yield cur
        stack.extend(reversed(cur.children))


@lru_cache(maxsize=None)
def _query(source: str) -> ts.Query:
    from .. import parse as parsing

    return ts.Query(parsing.language("cuda"), source)


def nodes_of(root: ts.Node, kinds: tuple[str, ...], purpose: str) -> list[ts.Node]:
    """Descendants of `root` of `kinds`: a walk while little text has been seen in this process
    (building a query costs ~15 ms, a single-file run must not pay it), a query after that."""
    from .. import parse as parsing

    if parsing.walk_instead_of_query(purpose, root.end_byte - root.start_byte, root):
        wanted = frozenset(kinds)
        return [n for n in walk(root) if n.type in wanted]
    return list(ts.QueryCursor(kinds_query(kinds)).captures(root).get("n", ()))


def kinds_query(kinds: tuple[str, ...]) -> ts.Query:
    """The query of `nodes_of` (built once per process; a run over many files builds it before
    its workers start)."""
    return _query("[" + " ".join(f"({k})" for k in kinds) + "] @n")


def declarator_name(decl: ts.Node | None, data: bytes) -> str | None:
    """`x` of `x`, `*x`, `x[4]`, `&x`, `x = v`."""
    while decl is not None:
        if decl.type == "identifier":
            return text(decl, data)
        if decl.type in ("field_identifier",):
            return text(decl, data)
        inner = decl.child_by_field_name("declarator")
        if inner is None and decl.type in ("reference_declarator", "parenthesized_declarator"):
            inner = next(iter(decl.named_children), None)  # (their declarator is not a named field)
        decl = inner
    return None


def int_value(node: ts.Node | None, data: bytes) -> int | None:
    """Value of an integer literal (also `-1`, `(x)`), else None."""
    if node is None:
        return None
    if node.type == "parenthesized_expression":
        inner = named(node)
        return int_value(inner[0], data) if len(inner) == 1 else None
    if node.type == "number_literal":
        raw = text(node, data)
        sign = -1 if raw.startswith("-") else 1  # tree-sitter folds `-1` into the literal
        m = INT_LITERAL.match(raw.lstrip("-").strip())
        if not m:
            return None
        digits = m.group(1).lower()
        if digits.startswith("0x"):
            return sign * int(digits, 16)
        if digits.startswith("0b"):
            return sign * int(digits[2:], 2)
        if len(digits) > 1 and digits.startswith("0"):
            return sign * int(digits, 8)
        return sign * int(digits)
    return None


def literal_suffix(node: ts.Node, data: bytes) -> str:
    m = INT_LITERAL.match(text(node, data).lstrip("-").strip())
    return m.group(2).lower() if m else ""


# ---------------------------------------------------------------- declarations in scope


_BLOCKS = ("compound_statement", "for_statement", "translation_unit", "case_statement")


def _parameters(fn: ts.Node | None) -> ts.Node | None:
    """The parameter list of a function definition or lambda."""
    if fn is None:
        return None
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    if params is None and fn.type == "lambda_expression":
        d = fn.child_by_field_name("declarator")
        params = d.child_by_field_name("parameters") if d is not None else None
    return params


def _scopes_before(node: ts.Node, fn: ts.Node | None, data: bytes, needle: bytes | None):
    """(block, the child of it that holds `node`) from the innermost block out, up to `fn`;
    with `needle`, only the blocks whose text before `node` holds it (no declaration of that
    name can be in the others)."""
    cur = node
    while cur is not None and cur != fn:
        parent = cur.parent
        if parent is None:
            break
        if parent.type in _BLOCKS and (needle is None or data.find(needle, parent.start_byte, cur.start_byte) != -1):
            yield parent, cur
        cur = parent


def _parameter_declarations(params: ts.Node | None, data: bytes):
    for p in named(params) if params is not None else []:
        if p.type in ("parameter_declaration", "optional_parameter_declaration"):
            name = declarator_name(p.child_by_field_name("declarator"), data)
            if name:
                yield name, p.child_by_field_name("type"), p


def declarations_before(node: ts.Node, data: bytes) -> list[tuple[str, ts.Node, ts.Node]]:
    """(name, type node, declaration node) of the parameters of the enclosing function and of
    the declarations in enclosing blocks that come before `node` (C++ scoping, simplified)."""
    out: list[tuple[str, ts.Node, ts.Node]] = []
    fn = enclosing_function(node)
    for block, cur in _scopes_before(node, fn, data, None):
        for sib in block.named_children:
            if sib.start_byte >= cur.start_byte:
                break
            if sib.type == "declaration":
                out.extend(_declared(sib, data))
    out.extend(_parameter_declarations(_parameters(fn), data))
    return out


def _declared(decl: ts.Node, data: bytes) -> list[tuple[str, ts.Node, ts.Node]]:
    typ = decl.child_by_field_name("type")
    out = []
    for d in decl.children_by_field_name("declarator"):
        name = declarator_name(d, data)
        if name:
            out.append((name, typ, decl))
    return out


def find_declaration(node: ts.Node, name: str, data: bytes) -> tuple[ts.Node, ts.Node] | None:
    """(type node, declaration) of the nearest declaration of `name` visible at `node`: the first
    of `declarations_before` named so. Blocks and declarations whose text lacks the name are
    skipped unread (the rules ask this for many identifiers of long functions)."""
    needle = name.encode()
    fn = enclosing_function(node)
    for block, cur in _scopes_before(node, fn, data, needle):
        for sib in block.named_children:
            if sib.start_byte >= cur.start_byte:
                break
            if sib.type == "declaration" and data.find(needle, sib.start_byte, sib.end_byte) != -1:
                for n, typ, decl in _declared(sib, data):
                    if n == name:
                        return typ, decl
    params = _parameters(fn)
    if params is not None and data.find(needle, params.start_byte, params.end_byte) != -1:
        for n, typ, decl in _parameter_declarations(params, data):
            if n == name:
                return typ, decl
    return None


def file_scope_declaration(ctx, name: str):
    """(type node, declaration) of a file-scope variable `name` (table cached per tree)."""
    key = ("file-scope-declarations", ctx.base)
    table = ctx.file_cache.get(key)
    if table is None:
        table = {}
        for decl in ctx.tree.root_node.named_children:
            if decl.type != "declaration":
                continue
            for d in decl.children_by_field_name("declarator"):
                var = declarator_name(d, ctx.data)
                if var:
                    table.setdefault(var, (decl.child_by_field_name("type"), decl))
        ctx.file_cache[key] = table
    return table.get(name)


def declarator_of(decl: ts.Node, name: str, data: bytes) -> ts.Node | None:
    for d in decl.children_by_field_name("declarator"):
        if declarator_name(d, data) == name:
            return d
    return None


def type_text(decl: ts.Node, typ: ts.Node | None, data: bytes) -> str:
    """The declared type as written, with qualifiers (`const unsigned int`)."""
    parts = [text(c, data) for c in decl.children if c.type == "type_qualifier"]
    parts.append(text(typ, data))
    return " ".join(p for p in parts if p)


def line_of(ctx, node: ts.Node) -> int:
    return ctx.source.position(ctx.base + node.start_byte)[0]
