"""Which values of a function differ between the threads of a block.

A value is per-thread when it derives from `threadIdx`, the lane id or a cooperative-groups rank,
directly or through local variables (flow-insensitive, per declaration: each use of a name is
resolved to the declaration in scope, so `blockIdx.y` is never the local `y` of a later loop).
Uniform, whatever flows into them: `blockIdx` / `blockDim` / `gridDim` / `warpSize`, kernel
parameters that are never assigned a per-thread value, the results of `__syncthreads_count /
_and / _or` (every thread gets the same), and `__shared__` memory read after a barrier (one
copy per block, so every thread reads the same value unless the index is per-thread).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import tree_sitter as ts
from msgspec import Struct

from .syntax import declarator_name, function_body, kinds_query, named, nodes_of, text

# Per-thread values: the thread index, the lane id, and cooperative-groups ranks.
THREAD_SOURCES = frozenset({
    "threadIdx", "hipThreadIdx_x", "hipThreadIdx_y", "hipThreadIdx_z", "__lane_id", "__lanemask_lt",
    "__lanemask_gt", "__lanemask_eq", "laneid", "thread_rank", "thread_index",
})
# built-in variables an index can derive from (`builtins`)
BUILTIN_INDICES = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}) | THREAD_SOURCES
BARRIERS = frozenset({"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"})
# block-wide reductions: every thread of the block gets the same result
BLOCK_UNIFORM_CALLS = frozenset({"__syncthreads_count", "__syncthreads_and", "__syncthreads_or"})
LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
# nodes whose declarations are visible to the nodes inside them (after the declaration)
SCOPES = frozenset({"compound_statement", "for_statement", "for_range_loop", "if_statement", "while_statement",
                    "switch_statement", "case_statement", "function_definition", "lambda_expression"})
_KINDS = ("identifier", "field_identifier", "declaration", "init_declarator", "assignment_expression",
          "for_range_loop", "return_statement", "continue_statement")


def prepare() -> None:
    """Before a many-file run's workers start: the query they all use."""
    kinds_query(_KINDS)


Var = tuple  # (declaration position, name); position -1: not declared in the function


class Flow(Struct, frozen=True):
    var: Var
    value: ts.Node
    node: ts.Node  # the declarator / assignment, for messages


class ThreadTaint:
    """The per-thread variables of one function, and `depends` / `reason` for its expressions."""

    def __init__(self, fn: ts.Node, data: bytes):
        self.data = data
        self.fn = fn
        body = function_body(fn) or fn
        found = sorted(nodes_of(body, _KINDS, "thread-taint"), key=lambda x: x.start_byte)
        # early exits (`return`, `continue`) in document order, for barrier analyses
        self.exits = [n for n in found if n.type in ("return_statement", "continue_statement")]
        self._ids = [n for n in found if n.type in ("identifier", "field_identifier")]
        self._id_starts = [n.start_byte for n in self._ids]
        self._scopes: dict[tuple[int, int], dict[str, list[tuple[int, Var]]]] = {}
        self._resolved: dict[int, Var] = {}
        self._shared: set[Var] = set()
        self._declare_parameters(fn)
        for n in found:
            if n.type == "declaration":
                self._declare(n)
            elif n.type == "for_range_loop":
                self._add(n, n.child_by_field_name("declarator"), n)
        self._holes = self._uniform_call_arguments()
        self.barriers = [n.start_byte for n in self._ids if text(n, data) in BARRIERS | {"sync"}
                         and n.parent is not None and n.parent.type in ("call_expression", "field_expression")]
        self._file_shared: set[str] | None = None
        self.tainted: dict[Var, Flow] = {}
        flows = self._flows(found)
        self._by_var: dict[Var, list[Flow]] = {}
        for flow in flows:
            self._by_var.setdefault(flow.var, []).append(flow)
        self._builtins: dict[Var, frozenset[str]] = {}
        self._propagate(flows)

    # ------------------------------------------------------------ declarations and scopes

    def _add(self, decl: ts.Node, declarator: ts.Node | None, scope: ts.Node | None) -> None:
        name = declarator_name(declarator, self.data)
        if not name or scope is None:
            return
        var = (declarator.start_byte, name)
        self._scopes.setdefault((scope.start_byte, scope.end_byte), {}).setdefault(name, []).append(
            (declarator.start_byte, var))
        if any(c.type == "type_qualifier" and text(c, self.data) == "__shared__" for c in decl.children):
            self._shared.add(var)

    def _declare(self, decl: ts.Node) -> None:
        scope = decl.parent
        while scope is not None and scope.type not in SCOPES:
            scope = scope.parent
        for d in decl.children_by_field_name("declarator"):
            self._add(decl, d, scope)

    def _declare_parameters(self, fn: ts.Node) -> None:
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator", "lambda_declarator"):
            decl = decl.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters") if decl is not None else None
        for p in named(params) if params is not None else []:
            if p.type in ("parameter_declaration", "optional_parameter_declaration"):
                self._add(p, p.child_by_field_name("declarator"), fn)

    def resolve(self, ident: ts.Node) -> Var:
        """The declaration `ident` names: the nearest one in scope before it, else (-1, name)."""
        got = self._resolved.get(ident.start_byte)
        if got is None:
            got = self._resolved[ident.start_byte] = self._lookup(ident)
        return got

    def _lookup(self, ident: ts.Node) -> Var:
        name = text(ident, self.data)
        cur = ident.parent
        while cur is not None:
            table = self._scopes.get((cur.start_byte, cur.end_byte))
            if table is not None and name in table:
                visible = [var for pos, var in table[name] if pos <= ident.start_byte]
                if visible:
                    return visible[-1]
            if cur == self.fn:
                break
            cur = cur.parent
        return (-1, name)

    def _uniform_call_arguments(self) -> list[tuple[int, int]]:
        holes = []
        for n in self._ids:
            call = n.parent
            if call is not None and call.type == "call_expression" and text(n, self.data) in BLOCK_UNIFORM_CALLS:
                args = call.child_by_field_name("arguments")
                if args is not None:
                    holes.append((args.start_byte, args.end_byte))
        return holes

    # ------------------------------------------------------------ propagation

    def _target(self, left: ts.Node | None) -> ts.Node | None:
        """The variable an assignment writes: `x`, `a[i]` / `s.f` / `*p` -> `a` / `s` / `p`."""
        while left is not None and left.type in ("subscript_expression", "field_expression", "pointer_expression",
                                                 "parenthesized_expression"):
            left = left.child_by_field_name("argument") or (named(left)[0] if named(left) else None)
        return left if left is not None and left.type == "identifier" else None

    def _flows(self, found: list[ts.Node]) -> list[Flow]:
        flows = []
        for n in found:
            if n.type == "init_declarator":
                d, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
                name = declarator_name(d, self.data)
                if name and value is not None:  # `_add` declared it at the init_declarator
                    flows.append(Flow((n.start_byte, name), value, n))
            elif n.type == "assignment_expression":
                target, value = self._target(n.child_by_field_name("left")), n.child_by_field_name("right")
                if target is not None and value is not None:
                    flows.append(Flow(self.resolve(target), value, n))
            elif n.type == "for_range_loop":
                d, value = n.child_by_field_name("declarator"), n.child_by_field_name("right")
                name = declarator_name(d, self.data)
                if name and value is not None:
                    flows.append(Flow((d.start_byte, name), value, n))
        return flows

    def _propagate(self, flows: list[Flow]) -> None:
        changed = True
        while changed:
            changed = False
            for flow in flows:
                if flow.var not in self.tainted and self._first_dependent(flow.value) is not None:
                    self.tainted[flow.var] = flow
                    changed = True

    # ------------------------------------------------------------ queries

    def _first_dependent(self, node: ts.Node) -> ts.Node | None:
        """The first identifier in `node` whose value differs between threads, or None."""
        for ident in self.identifiers_in(node):
            if self._in_hole(ident.start_byte):
                continue
            name = text(ident, self.data)
            if ident.type == "field_identifier":
                if name in THREAD_SOURCES:
                    return ident
                continue
            var = self.resolve(ident)
            if var[0] < 0 and name in THREAD_SOURCES:
                return ident
            if var in self.tainted and not (self._is_shared(var) and self._after_barrier(ident, var)):
                return ident
        return None

    def _in_hole(self, pos: int) -> bool:
        return any(s <= pos < e for s, e in self._holes)

    def _is_shared(self, var: Var) -> bool:
        if var in self._shared:
            return True
        if var[0] >= 0:
            return False
        if self._file_shared is None:
            root = self.fn
            while root.parent is not None:
                root = root.parent
            self._file_shared = {name for decl in root.named_children if decl.type == "declaration"
                                 and any(text(c, self.data) == "__shared__" for c in decl.children
                                         if c.type == "type_qualifier")
                                 for d in decl.children_by_field_name("declarator")
                                 for name in [declarator_name(d, self.data)] if name}
        return var[1] in self._file_shared

    def _after_barrier(self, ident: ts.Node, var: Var) -> bool:
        """A barrier separates this read of `var` from the writes to it: one comes between the
        last write before the read and the read, or, where the writes come later in the text,
        in a loop around the read (the previous iteration's barrier)."""
        pos = ident.start_byte
        before = [f.node.start_byte for f in self._by_var.get(var, ()) if f.node.start_byte < pos]
        if before:
            last = max(before)
            return any(last < b < pos for b in self.barriers)
        cur = ident.parent
        while cur is not None and cur != self.fn:
            if cur.type in LOOPS and any(cur.start_byte <= b < cur.end_byte for b in self.barriers):
                return True
            cur = cur.parent
        return False

    def identifiers_in(self, node: ts.Node) -> list[ts.Node]:
        lo = bisect_left(self._id_starts, node.start_byte)
        return self._ids[lo:bisect_right(self._id_starts, node.end_byte - 1)]

    def builtins(self, node: ts.Node) -> frozenset[str]:
        """The built-in variables (`threadIdx`, `blockIdx`, ...) `node` derives from, through the
        values of the local variables it reads."""
        out: set[str] = set()
        for ident in self.identifiers_in(node):
            name = text(ident, self.data)
            if ident.type == "field_identifier":
                if name in THREAD_SOURCES:
                    out.add(name)
                continue
            var = self.resolve(ident)
            if var[0] < 0 and name in BUILTIN_INDICES:
                out.add(name)
            elif var in self._by_var:
                out |= self._var_builtins(var)
        return frozenset(out)

    def _var_builtins(self, var: Var) -> frozenset[str]:
        got = self._builtins.get(var)
        if got is None:
            self._builtins[var] = frozenset()  # cycles (`i = i + k`) add nothing new
            got = frozenset().union(*(self.builtins(f.value) for f in self._by_var[var]))
            self._builtins[var] = got
        return got

    def values(self, ident: ts.Node) -> list[ts.Node]:
        """The values assigned to the variable `ident` names (its initializer and assignments)."""
        return [f.value for f in self._by_var.get(self.resolve(ident), ())]

    def depends(self, node: ts.Node | None) -> bool:
        return node is not None and self._first_dependent(node) is not None

    def reason(self, node: ts.Node | None, line_of) -> str:
        """How `node` depends on the thread: "`threadIdx.x`", or "`i` (`i = threadIdx.x`, line 2)"
        for a variable (`line_of(node)` gives a node's line in the file)."""
        ident = self._first_dependent(node) if node is not None else None
        if ident is None:
            return ""
        var = None if ident.type == "field_identifier" else self.resolve(ident)
        if var not in self.tainted:  # a thread source itself: `threadIdx.x`, `block.thread_rank()`
            source = ident.parent if ident.parent is not None and ident.parent.type == "field_expression" else ident
            if source.parent is not None and source.parent.type == "call_expression":
                source = source.parent
            return f"`{text(source, self.data)}`"
        flow = self.tainted[var]
        assigned = " ".join(text(flow.node, self.data).split())
        return f"`{text(ident, self.data)}` (`{assigned}`, line {line_of(flow.node)})"


def thread_taint(node: ts.Node, ctx) -> ThreadTaint | None:
    """The analysis of the function enclosing `node` (cached per function)."""
    from .syntax import enclosing_function

    fn = enclosing_function(node)
    if fn is None:
        return None
    key = ("thread-taint", ctx.base + fn.start_byte, ctx.base + fn.end_byte)
    cache = ctx.file_cache
    got = cache.get(key)
    if got is None:
        got = ThreadTaint(fn, ctx.data)
        cache[key] = got
    return got
