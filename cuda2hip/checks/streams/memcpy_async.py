"""HIP301: blocking copies / memsets -> the `*Async` call plus a stream synchronize.

The rewrite depends on where the call stands (statement-context analysis):

- a plain statement                  `cudaMemcpy(...);`       -> two statements
- wrapped in a one-argument macro    `CHECK(cudaMemcpy(...));` -> two checked statements
- a brace-less `if` / loop body      `if (c) cudaMemcpy(...);` -> a braced block
- its value assigned / initialised   `err = cudaMemcpy(...);` -> `err = A; if (err == ok) err = B;`
- compared with success              `cudaMemcpy(...) != cudaSuccess` -> `(A != ok || B != ok)`
- used as a truth value              `if (cudaMemcpy(...))`  -> `(A != ok || B != ok)`
- value discarded in a `for` header  -> a comma expression `(A, B)`

Anything else gets a display-only fix (shown, never applied). The stream is the only stream
variable / parameter in scope of the enclosing function when there is exactly one that has a
value at the call, else the rule option `stream` (default the null stream `0`).
"""

from __future__ import annotations

import re

import tree_sitter as ts

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import (callee, call_args, declarations_before, declarator_of, named, text)

# blocking API (without the cuda/hip prefix) -> (async API, parameter count of the async call
# without the stream, defaults of trailing parameters the blocking call may omit)
SYNC_TO_ASYNC: dict[str, tuple[str, int, dict[int, str]]] = {
    "Memcpy": ("MemcpyAsync", 4, {}),
    "Memcpy2D": ("Memcpy2DAsync", 7, {}),
    "Memcpy3D": ("Memcpy3DAsync", 1, {}),
    "MemcpyToSymbol": ("MemcpyToSymbolAsync", 5, {3: "0", 4: "{p}MemcpyHostToDevice"}),
    "MemcpyFromSymbol": ("MemcpyFromSymbolAsync", 5, {3: "0", 4: "{p}MemcpyDeviceToHost"}),
    "MemcpyPeer": ("MemcpyPeerAsync", 5, {}),
    "Memset": ("MemsetAsync", 3, {}),
    "Memset2D": ("Memset2DAsync", 5, {}),
    "Memset3D": ("Memset3DAsync", 3, {}),
}
STREAM_TYPES = frozenset({"cudaStream_t", "hipStream_t"})
BRACELESS_PARENTS = frozenset({"if_statement", "else_clause", "for_statement", "while_statement",
                               "do_statement", "for_range_loop"})
BLOCK_PARENTS = frozenset({"compound_statement", "case_statement"})
SIMPLE_LVALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\s*(\.|->)\s*[A-Za-z_][A-Za-z0-9_]*)*$")


def split_api(name: str) -> tuple[str, str] | None:
    for prefix in ("cuda", "hip"):
        if name.startswith(prefix) and name[len(prefix):] in SYNC_TO_ASYNC:
            return prefix, name[len(prefix):]
    return None


@predicate("blocking-copy-call", callees={p + base for p in ("cuda", "hip") for base in SYNC_TO_ASYNC})
def blocking_copy_call(node, env, ctx, args):
    """A call of cudaMemcpy / cudaMemcpy2D / 3D / ToSymbol / FromSymbol / Peer or the cudaMemset
    family (either spelling); adds $FN (the name) and $ASYNC (the async name)."""
    fn = callee(node)
    if fn is None or node.child_by_field_name("function") != fn:
        return False  # `obj.cudaMemcpy(...)`, `ns::...`: not the runtime API
    api = split_api(text(fn, ctx.data))
    if api is None:
        return False
    prefix, base = api
    return {"FN": capture(fn, ctx.data), "ASYNC": capture(fn, ctx.data, prefix + SYNC_TO_ASYNC[base][0])}


def choose_stream(call: ts.Node, ctx, options: dict) -> tuple[str, str]:
    """(stream expression, why) for the rewrite of `call`."""
    fallback = str(options.get("stream", "0"))
    if not options.get("prefer-scope-stream", True):
        return fallback, "the rule option `stream`"
    data = ctx.data
    streams = []
    for name, typ, decl in declarations_before(call, data):
        if text(typ, data) not in STREAM_TYPES:
            continue
        d = declarator_of(decl, name, data) if decl.type == "declaration" else decl.child_by_field_name("declarator")
        plain = d is not None and (d.type == "identifier" or (
            d.type == "init_declarator" and d.child_by_field_name("declarator").type == "identifier"))
        streams.append((name, decl, d, plain))
    names = {s[0] for s in streams}
    if len(streams) != 1 or len(names) != 1 or not streams[0][3]:
        why = "the rule option `stream`"
        if streams:
            why += f" (streams in scope: {', '.join(sorted(names))}; not exactly one stream variable)"
        return fallback, why
    name, decl, d, _ = streams[0]
    if decl.type != "declaration" or d.type == "init_declarator":
        return name, f"`{name}`, the only stream in scope"
    # A declared-but-uninitialised stream must be created before the call.
    between = data[decl.end_byte:call.start_byte]
    if re.search(rb"Stream(Create\w*)\s*\(\s*&\s*" + re.escape(name.encode()) + rb"\b", between):
        return name, f"`{name}`, the only stream in scope"
    return fallback, f"the rule option `stream` (`{name}` is not created before this call)"


def _async_call(call: ts.Node, prefix: str, base: str, stream: str, data: bytes) -> str | None:
    async_name, nparams, defaults = SYNC_TO_ASYNC[base]
    args = [text(a, data) for a in call_args(call)]
    if len(args) > nparams:
        return None
    for i in range(len(args), nparams):
        if i not in defaults:
            return None
        args.append(defaults[i].format(p=prefix))
    args.append(stream)
    return f"{prefix}{async_name}({', '.join(args)})"


def _success_name(node: ts.Node | None, data: bytes) -> bool:
    return node is not None and text(node, data) in ("cudaSuccess", "hipSuccess")


def _join(ctx, stmt: ts.Node, parts: list[str]) -> str:
    if ctx.is_fragment:  # a macro body: stay on one line
        return " ".join(parts)
    indent = ctx.source.indentation_at(ctx.base + stmt.start_byte)
    return ("\n" + indent).join(parts)


def plan_rewrite(call: ts.Node, a: str, b: str, ok: str, ctx) -> tuple[list[Edit], str] | None:
    """Edits for the statement context of `call` (see the module docstring), and a short name
    of the context; None when no rewrite keeps the code correct."""
    data = ctx.data
    expr = call
    wrap = "{}"
    parent = call.parent
    # CHECK(cudaMemcpy(...)): a one-argument wrapper call
    if parent is not None and parent.type == "argument_list" and len(named(parent)) == 1:
        outer = parent.parent
        fn = outer.child_by_field_name("function") if outer is not None else None
        if outer is not None and outer.type == "call_expression" and fn is not None and fn.type == "identifier":
            expr = outer
            wrap = text(fn, data) + "({})"
    parent = expr.parent
    if parent is None:
        return None
    if parent.type == "expression_statement":
        holder = parent.parent
        first, second = wrap.format(a) + ";", wrap.format(b) + ";"
        if holder is not None and holder.type in BLOCK_PARENTS:
            return [Edit(parent.start_byte, parent.end_byte, _join(ctx, parent, [first, second]))], "statement"
        if holder is not None and holder.type in BRACELESS_PARENTS:
            return [Edit(parent.start_byte, parent.end_byte, f"{{ {first} {second} }}")], "brace-less body"
        return None
    if expr is not call:
        return None  # the wrapper's own value is used: leave it to a human
    if parent.type == "assignment_expression" and text(parent.child_by_field_name("operator"), data) == "=" \
            and parent.child_by_field_name("right") == call:
        left = text(parent.child_by_field_name("left"), data)
        stmt = parent.parent
        if SIMPLE_LVALUE.match(left) and stmt is not None and stmt.type == "expression_statement" \
                and stmt.parent is not None and stmt.parent.type in BLOCK_PARENTS:
            tail = f"if ({left} == {ok}) {left} = {b};"
            return [Edit(call.start_byte, call.end_byte, a),
                    Edit(stmt.end_byte, stmt.end_byte, _join(ctx, stmt, ["", tail]))], "assigned value"
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == call:
        decl = parent.parent
        name = text(parent.child_by_field_name("declarator"), data)
        if decl is not None and decl.type == "declaration" and len(decl.children_by_field_name("declarator")) == 1 \
                and re.fullmatch(r"[A-Za-z_]\w*", name) and decl.parent is not None \
                and decl.parent.type in BLOCK_PARENTS \
                and not any(text(q, data) in ("const", "constexpr") for q in decl.children if q.type == "type_qualifier"):
            tail = f"if ({name} == {ok}) {name} = {b};"
            return [Edit(call.start_byte, call.end_byte, a),
                    Edit(decl.end_byte, decl.end_byte, _join(ctx, decl, ["", tail]))], "initialised value"
        return None
    if parent.type == "binary_expression":
        op = text(parent.child_by_field_name("operator"), data)
        other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == call else "left")
        if op in ("!=", "==") and _success_name(other, data):
            okname = text(other, data)
            if op == "!=":
                new = f"({a} != {okname} || {b} != {okname})"
            else:
                new = f"({a} == {okname} && {b} == {okname})"
            return [Edit(parent.start_byte, parent.end_byte, new)], "comparison with success"
        if op in ("&&", "||"):
            return [Edit(call.start_byte, call.end_byte, f"({a} != {ok} || {b} != {ok})")], "truth value"
        return None
    if parent.type == "condition_clause" or (parent.type == "unary_expression"
                                             and text(parent.child_by_field_name("operator"), data) == "!"):
        return [Edit(call.start_byte, call.end_byte, f"({a} != {ok} || {b} != {ok})")], "truth value"
    if parent.type == "for_statement":
        field = _field_of(parent, call)
        if field == "condition":
            return [Edit(call.start_byte, call.end_byte, f"({a} != {ok} || {b} != {ok})")], "truth value"
        if field in ("initializer", "update"):
            return [Edit(call.start_byte, call.end_byte, f"({a}, {b})")], "for header"
        return None
    if parent.type == "comma_expression" and parent.parent is not None and parent.parent.type == "for_statement" \
            and _field_of(parent.parent, parent) in ("initializer", "update"):
        return [Edit(call.start_byte, call.end_byte, f"({a}, {b})")], "for header"
    return None


def _field_of(parent: ts.Node, child: ts.Node) -> str | None:
    for i, c in enumerate(parent.children):
        if c == child:
            return parent.field_name_for_child(i)
    return None


@fix_builder("blocking-copy-to-async")
def blocking_copy_to_async(match, ctx, rule):
    call = match.node
    data = ctx.data
    fn = callee(call)
    prefix, base = split_api(text(fn, data))
    name = text(fn, data)
    stream, why = choose_stream(call, ctx, ctx.options(rule))
    a = _async_call(call, prefix, base, stream, data)
    if a is None:
        return None  # an argument count the API does not have: nothing sensible to write
    b = f"{prefix}StreamSynchronize({stream})"
    ok = f"{prefix}Success"
    plan = plan_rewrite(call, a, b, ok, ctx)
    message = (f"`{name}` can be written as `{prefix}{SYNC_TO_ASYNC[base][0]}` + `{prefix}StreamSynchronize` "
               f"on stream `{stream}` ({why}); a refactoring toward explicit streams, not a correctness fix")
    if plan is None:
        return BuiltFix([Edit(call.start_byte, call.end_byte, a)], applicability="display-only", effort="medium",
                        message=message + "; its value is used here, so rewrite it by hand",
                        description=f"Use `{a}` and synchronize `{stream}` before the result is used")
    edits, where = plan
    return BuiltFix(edits, message=message, data={"stream": stream, "context": where},
                    description=f"Use `{prefix}{SYNC_TO_ASYNC[base][0]}` + `{b}`")
