"""`embedded-cuda` rule kind: CUDA C++ held in Python strings (cupy.RawKernel, torch's
load_inline, pycuda's SourceModule, ...) is linted with the C++ rules the run selected.

The string's value is linted by the CUDA frontend; each finding keeps its own code and message
and is placed at the real line and column of the .py file. Fixes of a plain literal are written
back into it (quotes, prefix and indentation kept; edit text escaped as the literal needs); a
fix is dropped when its edits do not map exactly (inside an escape sequence, text the literal
cannot hold, or a result that does not evaluate to the fixed value). Sources built by f-strings,
concatenation or formatting are reported, not rewritten: this rule's own finding says so.

Operation strings (ElementwiseKernel, ReductionKernel) are fragments, not translation units:
they are linted inside a function body.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ...engine.compiled import rule_kind
from ...engine.engine import PARSE_RECOVERY
from ...findings import Applicability, Edit, Fix
from .base import CallArg, Params, PyRule, arguments, callee_roots

FRAGMENT_PREFIX = "void _c2h_fragment() {\n"
FRAGMENT_SUFFIX = "\n;}\n"
APPLICABLE = (Applicability.SAFE, Applicability.UNSAFE)


class SourceArg(CallArg):
    role: Literal["unit", "statements", "expression"] = "unit"


class EmbeddedParams(Params):
    sources: list[SourceArg]
    # calls that hand their first argument through unchanged for our purposes
    passthrough: list[str] = msgspec.field(default_factory=lambda: ["textwrap.dedent", "inspect.cleandoc"])


@rule_kind("embedded-cuda")
class EmbeddedCudaRule(PyRule):
    kinds = frozenset({"Call"})
    params_type = EmbeddedParams

    def file_needles(self):
        return callee_roots(self.params.sources)

    def visit(self, call, ctx):
        for spec, callee, value in arguments(call, self.params.sources, ctx.module):
            for expr in self._sources(value, ctx.module):
                self._lint_source(expr, spec.role, callee, ctx)

    def _sources(self, expr, module, depth=4):
        import libcst as cst

        expr = module.resolve(expr)
        if isinstance(expr, (cst.List, cst.Tuple)) and depth > 0:
            for el in expr.elements:
                if isinstance(el, cst.Element):
                    yield from self._sources(el.value, module, depth - 1)
            return
        if isinstance(expr, cst.Call) and expr.args and depth > 0 and \
                module.qualified_names(expr.func).intersection(self.params.passthrough):
            yield from self._sources(expr.args[0].value, module, depth - 1)
            return
        yield expr

    def _lint_source(self, expr, role: str, callee: str, ctx) -> None:
        from ...lang.python.strings import text_of

        st = text_of(expr, ctx.module)
        if st is None:
            return
        key = ("embedded", ctx.module.span(expr), role)
        if key in ctx.cache:
            return  # the same constant passed twice
        ctx.cache[key] = True
        prefix, suffix = ("", "") if role == "unit" else (FRAGMENT_PREFIX, FRAGMENT_SUFFIX)
        result, cuda_rules = _lint_cuda(ctx, prefix + st.text.value + suffix)
        if result is None:
            return
        plen = len(prefix.encode())
        vlen = len(st.text.value_bytes)
        ctx.embedded_errors += result.parse_errors
        for line in result.error_lines:
            v = _line_offset(prefix + st.text.value + suffix, line) - plen
            ctx.embedded_error_starts.append(st.text.start(min(max(v, 0), vlen)))
        not_rewritten = 0
        for f in result.findings:
            if f.rule_id == PARSE_RECOVERY:
                continue
            vs = min(max(f.start - plen, 0), vlen)
            ve = min(max(f.end - plen, vs), vlen)
            start = st.text.start(vs)
            end = st.text.end(ve) if ve > vs else start
            fix = None
            if f.fix is not None:
                fix = _map_fix(f.fix, st, plen, vlen, ctx) if st.rewritable else None
                if fix is None and f.fix.applicability in APPLICABLE and not f.suppressed:
                    not_rewritten += 1
            line, col = ctx.source.position(start)
            end_line, end_col = ctx.source.position(end)
            extra = dict(f.extra)
            extra["embedded_in"] = callee
            ctx.findings.append(msgspec.structs.replace(
                f, start=start, end=end, line=line, column=col, end_line=end_line, end_column=end_col,
                fix=fix, extra=extra))
        if not_rewritten:
            start, end = ctx.module.span(expr)
            if st.literal is None:
                why = f"built by {HOW.get(st.how, st.how)}"
            elif not st.exact:
                why = "a literal whose value cuda2hip cannot map back exactly"
            else:
                why = "escape sequences or quotes where the fix edits the literal"
            ctx.report(self, start, end, self.message(CALLEE=callee, HOW=why, COUNT=str(not_rewritten)),
                       data={"how": why, "fixes_not_applied": not_rewritten})


HOW = {"f-string": "an f-string", "concatenation": "a `+` concatenation",
       "implicit concatenation": "an implicit concatenation", "% formatting": "`%` formatting",
       "str.format": "`str.format`"}


def _lint_cuda(ctx, text: str):
    from ...engine.frontends.registry import frontend
    from ...lang.source import SourceError, SourceText

    rules = ctx.cache.get("_cuda_rules")
    if rules is None:
        engine = ctx.rules.engine if ctx.rules is not None else None
        if engine is None:
            return None, None
        rules = ctx.cache["_cuda_rules"] = engine.ruleset_for(ctx.path, "cuda")
    source = SourceText(path=ctx.path, data=text.encode("utf-8"))
    try:
        return frontend("cuda").lint(source, rules, ctx.settings), rules
    except SourceError:
        return None, None  # not C/C++ at all (a file name, a message): nothing to check


def _line_offset(text: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        nxt = text.find("\n", pos)
        if nxt == -1:
            break
        pos = nxt + 1
    return len(text[:pos].encode("utf-8"))


def _map_fix(fix: Fix, st, plen: int, vlen: int, ctx) -> Fix | None:
    """The fix's edits as edits of the literal in the file, or None when they do not map
    exactly (checked by evaluating the edited literal)."""
    from ...lang.python.literals import encode_for

    literal_start, literal_end = ctx.module.span(st.literal)
    value = st.text.value_bytes
    edits = []
    for e in fix.edits:
        vs, ve = e.start - plen, e.end - plen
        if vs < 0 or ve > vlen:
            return None
        bs, be = st.text.boundary(vs), st.text.boundary(ve)
        text = encode_for(e.text, st.syntax)
        if bs is None or be is None or text is None:
            return None
        edits.append((vs, ve, e.text, Edit(bs, be, text)))
    # Check: the edited literal must evaluate to the edited value.
    token = ctx.source.data[literal_start:literal_end]
    new_token = _apply(token, [(ed.start - literal_start, ed.end - literal_start, ed.text.encode())
                               for *_, ed in edits])
    new_value = _apply(value, [(vs, ve, t.encode()) for vs, ve, t, _ in edits])
    if _evaluate(new_token) != new_value.decode("utf-8"):
        return None
    return Fix(fix.applicability, tuple(ed for *_, ed in edits), fix.description)


def _apply(data: bytes, edits) -> bytes:
    out, pos = [], 0
    for s, e, text in sorted(edits):
        if s < pos:
            raise ValueError("overlapping edits")
        out += [data[pos:s], text]
        pos = e
    out.append(data[pos:])
    return b"".join(out)


def _evaluate(token: bytes):
    import ast

    try:
        value = ast.literal_eval(token.decode("utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else value
