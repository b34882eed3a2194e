"""Block barriers: barriers under thread-dependent control flow (HIP401), bare
`__builtin_amdgcn_s_barrier()` without fences (HIP407), and grid-wide syncs without a
cooperative launch in the translation unit (HIP408)."""

from __future__ import annotations

import tree_sitter as ts

from ..engine.builders import BuiltFix, fix_builder
from ..engine.pattern import capture
from ..engine.predicates import predicate
from ..findings import Edit
from ..lang.cxx.syntax import (callee, callee_name, call_args, enclosing_function, find_declaration, line_of, named,
                               text, type_text, walk)
from ..lang.cxx.thread_taint import BARRIERS, LOOPS, thread_taint
from ..lang.lazy_regex import LazyRegex


def _condition(node: ts.Node) -> ts.Node | None:
    cond = node.child_by_field_name("condition")
    return cond


def _head(ctx, node: ts.Node, cond: ts.Node) -> str:
    keyword = {"if_statement": "if", "while_statement": "while", "do_statement": "while",
               "for_statement": "for", "switch_statement": "switch"}.get(node.type, "")
    cond_text = " ".join(text(cond, ctx.data).split())
    if keyword == "for":
        return f"for (...; {cond_text}; ...)"
    if cond.type in ("condition_clause", "parenthesized_expression"):
        return f"{keyword} {cond_text}".strip()
    return f"{keyword} ({cond_text})".strip() if keyword else cond_text


@predicate("barrier-in-thread-dependent-flow", callees=BARRIERS)
def barrier_in_thread_dependent_flow(node, env, ctx, args):
    """A `__syncthreads*` call that not every thread of the block may reach: inside an
    if/loop/switch/?:/&&/|| whose condition depends on the thread index, or after a `return`
    (or a `continue` of an enclosing loop) under such a condition. Adds $BARRIER, $WHERE."""
    name = callee_name(node, ctx.data)
    if name not in BARRIERS or node.child_by_field_name("function").type != "identifier":
        return False
    taint = thread_taint(node, ctx)
    if taint is None:
        return False
    fn = enclosing_function(node)
    child, cur = node, node.parent
    while cur is not None and cur != fn:
        cond = None
        if cur.type in ("if_statement", "while_statement", "do_statement", "for_statement", "switch_statement"):
            cond = _condition(cur)
            if cond is not None and (child == cond or _contains(cond, node)):
                cond = None  # the barrier is in the condition itself
            elif cur.type == "for_statement" and _same_trip_count(cur, taint, ctx.data):
                cond = None
        elif cur.type == "conditional_expression":
            cond = cur.child_by_field_name("condition")
            if cond is not None and _contains(cond, node):
                cond = None
        elif cur.type == "binary_expression" and text(cur.child_by_field_name("operator"), ctx.data) in ("&&", "||"):
            left = cur.child_by_field_name("left")
            if not _contains(left, node):
                cond = left
        if cond is not None and taint.depends(cond):
            where = (f"inside `{_head(ctx, cur, cond)}` (line {line_of(ctx, cur)}), whose condition depends on the "
                     f"thread index through {_reason(taint, cond, ctx)}")
            return {"BARRIER": capture(node, ctx.data, name), "WHERE": capture(node, ctx.data, where)}
        child, cur = cur, cur.parent
    exit_ = _early_exit_before(node, fn, taint, ctx)
    if exit_ is not None:
        return {"BARRIER": capture(node, ctx.data, name), "WHERE": capture(node, ctx.data, exit_)}
    return False


_RELATIONS = frozenset({"<", "<=", ">", ">=", "!="})


def _same_trip_count(loop: ts.Node, taint, data: bytes) -> bool:
    """`for (t = A + tid; t < B + tid; t += C)`: the start and the bound carry the same per-thread
    terms and everything else (A, B, the step) is uniform, so every thread runs the same number
    of iterations (ggml's wkv.cu and gla.cu). The body must not assign `t`."""
    init, cond, step = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if cond is None or cond.type != "binary_expression" or text(cond.child_by_field_name("operator"), data) \
            not in _RELATIONS:
        return False
    var, start = _loop_start(init, data)
    left, bound = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if var is None or left is None or bound is None or left.type != "identifier" or text(left, data) != var:
        return False
    if not _uniform_step(step, var, taint, data):
        return False
    rest = _terms(start, data)
    for sign, node in _terms(bound, data):
        same = next((t for t in rest if t[0] == sign and text(t[1], data) == text(node, data)), None)
        if same is not None:
            rest.remove(same)  # a per-thread term both sides carry cancels out
        else:
            rest.append((sign, node))
    if any(taint.depends(n) for _, n in rest):
        return False
    body = loop.child_by_field_name("body")
    return body is None or not any(_assigns(n, var, data) for n in walk(body))


def _loop_start(init: ts.Node | None, data: bytes) -> tuple[str | None, ts.Node | None]:
    if init is not None and init.type == "declaration":
        decls = init.children_by_field_name("declarator")
        if len(decls) == 1 and decls[0].type == "init_declarator":
            name = decls[0].child_by_field_name("declarator")
            if name is not None and name.type == "identifier":
                return text(name, data), decls[0].child_by_field_name("value")
    if init is not None and init.type == "assignment_expression" and text(init.child_by_field_name("operator"),
                                                                           data) == "=":
        left = init.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return text(left, data), init.child_by_field_name("right")
    return None, None


def _uniform_step(step: ts.Node | None, var: str, taint, data: bytes) -> bool:
    if step is None:
        return False
    if step.type == "update_expression":
        arg = step.child_by_field_name("argument")
        return arg is not None and text(arg, data) == var
    if step.type == "assignment_expression" and text(step.child_by_field_name("operator"), data) in ("+=", "-="):
        left = step.child_by_field_name("left")
        return left is not None and text(left, data) == var and not taint.depends(step.child_by_field_name("right"))
    return False


def _terms(node: ts.Node | None, data: bytes, sign: int = 1) -> list[tuple[int, ts.Node]]:
    """`a + (b - c)` -> [(+1, a), (+1, b), (-1, c)]."""
    if node is None:
        return []
    if node.type == "parenthesized_expression" and len(named(node)) == 1:
        return _terms(named(node)[0], data, sign)
    if node.type == "binary_expression":
        op = text(node.child_by_field_name("operator"), data)
        if op in ("+", "-"):
            right_sign = sign if op == "+" else -sign
            return _terms(node.child_by_field_name("left"), data, sign) + \
                _terms(node.child_by_field_name("right"), data, right_sign)
    return [(sign, node)]


def _assigns(node: ts.Node, var: str, data: bytes) -> bool:
    if node.type == "assignment_expression":
        target = node.child_by_field_name("left")
    elif node.type == "update_expression":
        target = node.child_by_field_name("argument")
    else:
        return False
    return target is not None and target.type == "identifier" and text(target, data) == var


def _reason(taint, cond: ts.Node, ctx) -> str:
    return taint.reason(cond, lambda n: line_of(ctx, n))


def _contains(outer: ts.Node | None, inner: ts.Node) -> bool:
    return outer is not None and outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _early_exit_before(barrier: ts.Node, fn: ts.Node | None, taint, ctx) -> str | None:
    for n in taint.exits:
        if n.start_byte >= barrier.start_byte:
            break
        if n.type == "continue_statement":
            loop = _ancestor(n, LOOPS, fn)
            if loop is None or not _contains(loop, barrier):
                continue
        # the nearest thread-dependent `if` around the exit that does not contain the barrier;
        # inside a block that ends in `return`, every thread that enters the block leaves: what
        # decides who reaches the barrier is the way into that block (ggml's mmq.cuh)
        word = "return" if n.type == "return_statement" else "continue"
        guard = None
        cur = n.parent
        while cur is not None and cur != fn:
            if _contains(cur, barrier):
                break
            if word == "return" and cur.type == "compound_statement" and _ends_in_return(cur):
                guard = None
            elif cur.type == "if_statement" and guard is None:
                cond = _condition(cur)
                if cond is not None and taint.depends(cond):
                    guard = cur
            cur = cur.parent
        if guard is not None:
            cond = _condition(guard)
            return (f"after an early `{word}` under `{_head(ctx, guard, cond)}` (line {line_of(ctx, guard)}), "
                    f"which depends on the thread index through {_reason(taint, cond, ctx)}: "
                    "threads that left never reach it")
    return None


def _ends_in_return(block: ts.Node) -> bool:
    last = [c for c in named(block) if c.type != "comment"]
    return bool(last) and last[-1].type == "return_statement"


def _ancestor(node: ts.Node, kinds, stop: ts.Node | None) -> ts.Node | None:
    cur = node.parent
    while cur is not None and cur != stop:
        if cur.type in kinds:
            return cur
        cur = cur.parent
    return None


# ---------------------------------------------------------------- bare s_barrier

FENCES = frozenset({"__builtin_amdgcn_fence", "__atomic_work_item_fence", "__threadfence", "__threadfence_block",
                    "__threadfence_system", "__atomic_thread_fence", "atomic_thread_fence"})


def _statement(node: ts.Node) -> ts.Node:
    return node.parent if node.parent is not None and node.parent.type == "expression_statement" else node


def _is_fence(stmt: ts.Node | None, data: bytes) -> bool:
    if stmt is None:
        return False
    return any(n.type == "call_expression" and callee_name(n, data) in FENCES for n in walk(stmt))


def _sibling(node: ts.Node, forward: bool) -> ts.Node | None:
    sib = node.next_named_sibling if forward else node.prev_named_sibling
    while sib is not None and sib.type == "comment":
        sib = sib.next_named_sibling if forward else sib.prev_named_sibling
    return sib


@predicate("bare-s-barrier", callees={"__builtin_amdgcn_s_barrier"})
def bare_s_barrier(node, env, ctx, args):
    """`__builtin_amdgcn_s_barrier()` without a fence right before and right after it. Adds
    $MISSING (which fences are missing)."""
    if callee_name(node, ctx.data) != "__builtin_amdgcn_s_barrier":
        return False
    stmt = _statement(node)
    before = _is_fence(_sibling(stmt, False), ctx.data)
    after = _is_fence(_sibling(stmt, True), ctx.data)
    if before and after:
        return False
    missing = ("a release fence before it and an acquire fence after it" if not (before or after)
               else "a release fence before it" if not before else "an acquire fence after it")
    return {"MISSING": capture(node, ctx.data, missing)}


@fix_builder("bare-s-barrier-to-syncthreads")
def bare_s_barrier_to_syncthreads(match, ctx, rule):
    stmt = _statement(match.node)
    if _is_fence(_sibling(stmt, False), ctx.data) or _is_fence(_sibling(stmt, True), ctx.data):
        return None  # partly fenced: the intent is not clear enough to rewrite
    return BuiltFix([Edit(match.start, match.end, "__syncthreads()")],
                    description="Use `__syncthreads()` (fence + barrier + fence)")


# ---------------------------------------------------------------- grid sync

COOPERATIVE_LAUNCH = LazyRegex(
    rb"\b(cudaLaunchCooperativeKernel|hipLaunchCooperativeKernel|cudaLaunchCooperativeKernelMultiDevice|"
    rb"hipLaunchCooperativeKernelMultiDevice|hipModuleLaunchCooperativeKernel|cuLaunchCooperativeKernel|"
    rb"cudaLaunchAttributeCooperative|hipLaunchAttributeCooperative|CU_LAUNCH_ATTRIBUTE_COOPERATIVE)\b")


def _is_grid(node: ts.Node, ctx) -> bool:
    data = ctx.data
    if node.type == "call_expression":
        return callee_name(node, data) == "this_grid"
    if node.type != "identifier":
        return False
    found = find_declaration(node, text(node, data), data)
    if found is None:
        return False
    typ, decl = found
    if "grid_group" in type_text(decl, typ, data):
        return True
    return decl.type == "declaration" and b"this_grid" in data[decl.start_byte:decl.end_byte]


@predicate("grid-sync-without-cooperative-launch", callees={"sync"})
def grid_sync_without_cooperative_launch(node, env, ctx, args):
    """`grid.sync()` / `cg::sync(grid)` / `this_grid().sync()` in a translation unit that has no
    cooperative launch. Adds $SYNC (the call as written)."""
    fn = callee(node)
    if fn is None or text(fn, ctx.data) != "sync":
        return False
    function = node.child_by_field_name("function")
    if function.type == "field_expression":
        target = function.child_by_field_name("argument")
    else:
        args_ = call_args(node)
        target = args_[0] if len(args_) == 1 else None
    if target is None or not _is_grid(target, ctx):
        return False
    cache = ctx.file_cache
    if "cooperative-launch" not in cache:
        cache["cooperative-launch"] = bool(COOPERATIVE_LAUNCH.search(ctx.file_context.data))
    if cache["cooperative-launch"]:
        return False
    return {"SYNC": capture(node, ctx.data)}
