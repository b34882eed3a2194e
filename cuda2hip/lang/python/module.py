"""A parsed Python file (libcst) and the questions rules ask about it: where is a node (byte
span), what does a name refer to (qualified names through imports and aliases: `import cupy as
cp` makes `cp.RawKernel` `cupy.RawKernel`), what value does a simple name hold (a single plain
assignment), which comments are there (suppressions).

libcst is imported here only, and only when a Python file is linted.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst import metadata as md

ParserSyntaxError = cst.ParserSyntaxError


class PyModule:
    def __init__(self, data: bytes):
        self.data = data
        self.wrapper = md.MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True)
        self.tree = self.wrapper.module

    @cached_property
    def _spans(self):
        return self.wrapper.resolve(md.ByteSpanPositionProvider)

    # -- positions ----------------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        s = self._spans[node]
        return s.start, s.start + s.length

    def text(self, node: cst.CSTNode) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")

    # -- structure ----------------------------------------------------------------------------
    @cached_property
    def _parents(self):
        return self.wrapper.resolve(md.ParentNodeProvider)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    @cached_property
    def aliases(self) -> frozenset[str]:
        """Every name bound by `as` anywhere in the file (a superset of import aliases)."""
        import re

        return frozenset(n.decode() for n in re.findall(rb"\bas\s+([A-Za-z_][A-Za-z0-9_]*)", self.data))

    def may_name(self, node: cst.CSTNode, last_names: frozenset[str]) -> bool:
        """Cheap test before qualified-name resolution: can `node` (a Name or Attribute) refer to
        something whose last component is in `last_names`?"""
        if isinstance(node, cst.Attribute):
            name = node.attr.value
        elif isinstance(node, cst.Name):
            name = node.value
        else:
            return False
        return name in last_names or name in self.aliases

    @cached_property
    def _qualified(self):
        return self.wrapper.resolve(md.QualifiedNameProvider)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        value = self._qualified.get(node)
        if value is None:
            return set()
        if callable(value):  # libcst hands out lazy values
            value = value()
        return {q.name for q in value}

    @cached_property
    def _scopes(self):
        return self.wrapper.resolve(md.ScopeProvider)

    def assigned_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The expression a name holds when it is assigned exactly once, by a plain `NAME = expr`
        (or `NAME: T = expr`) in the scope that the access sees."""
        scope = self._scopes.get(name)
        if scope is None:
            return None
        assignments = list(scope[name.value])
        if len(assignments) != 1 or not isinstance(assignments[0], md.Assignment):
            return None
        target = assignments[0].node
        if not isinstance(target, cst.Name):
            return None
        holder = self.parent(target)
        if isinstance(holder, cst.AssignTarget):
            stmt = self.parent(holder)
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                return stmt.value
        elif isinstance(holder, cst.AnnAssign) and holder.value is not None:
            return holder.value
        return None

    def resolve(self, expr: cst.BaseExpression, depth: int = 4) -> cst.BaseExpression:
        """Follow simple names to the value they were assigned (a few steps at most)."""
        while depth > 0 and isinstance(expr, cst.Name):
            value = self.assigned_value(expr)
            if value is None:
                break
            expr = value
            depth -= 1
        return expr

    # -- comments -----------------------------------------------------------------------------
    @cached_property
    def comments(self) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        module = self

        class Collect(cst.CSTVisitor):
            def visit_Comment(self, node: cst.Comment) -> None:
                found.append(module.span(node))

        self.tree.visit(Collect())
        return sorted(found)

    def walk(self, visit) -> None:
        """Call `visit(node)` for every node, in source order."""

        class Walk(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                visit(node)
                return True

        self.tree.visit(Walk())


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - a literal libcst cannot evaluate is not a string to us
            return None
        return value if isinstance(value, str) else None
    return None


def call_argument(call: cst.Call, position: int | None, keyword: str | None) -> cst.Arg | None:
    """The argument bound to a parameter given by position and/or keyword name. Positions are
    only trusted while no `*args` / `**kwargs` come before them."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if keyword is not None and arg.keyword.value == keyword:
                return arg
            continue
        if arg.star:
            return None if keyword is None else _keyword_only(call, keyword)
        if position is not None and positional == position:
            return arg
        positional += 1
    return None


def _keyword_only(call: cst.Call, keyword: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return None


def dict_entry(value: cst.BaseExpression, key: str, module: PyModule) -> cst.BaseExpression | None:
    """The entry `key` of a dict display `{"key": v}` or a `dict(key=v)` call."""
    if isinstance(value, cst.Dict):
        for el in value.elements:
            if isinstance(el, cst.DictElement) and string_value(module.resolve(el.key)) == key:
                return el.value
    if isinstance(value, cst.Call) and module.qualified_names(value.func) & {"builtins.dict", "dict"}:
        for arg in value.args:
            if arg.keyword is not None and arg.keyword.value == key:
                return arg.value
    return None
