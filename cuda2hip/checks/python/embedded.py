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
        starts = _line_starts(prefix.encode() + st.text.value_bytes + suffix.encode()) if result.error_lines else []
        for line in result.error_lines:
            v = (starts[line - 1] if line <= len(starts) else starts[-1]) - plen
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


def _line_starts(data: bytes) -> list[int]:
    """Byte offsets where the lines of `data` start (its text's lines, as a lint counts them)."""
    import re

    return [0] + [m.end() for m in re.finditer(b"\n", data)]


def _map_fix(fix: Fix, st, plen: int, vlen: int, ctx) -> Fix | None:
    """The fix's edits as edits of the literal in the file, or None when they do not map
    exactly (checked by evaluating the edited literal)."""
    from ...lang.python.literals import encode_for

    literal_start, literal_end = ctx.module.span(st.literal)
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
    # Check: the edited literal must evaluate to the edited value. Where the edits lie apart,
    # around each alone (linear in the literal's size however many fixes map into it); if
    # that check fails, on the whole literal, which decides.
    token = ctx.source.data[literal_start:literal_end]
    if not all(_holds_around(token, literal_start, st, edit) for edit in _apart(edits)):
        value = st.text.value_bytes
        new_token = _apply(token, [(ed.start - literal_start, ed.end - literal_start, ed.text.encode())
                                   for *_, ed in edits])
        new_value = _apply(value, [(vs, ve, t.encode()) for vs, ve, t, _ in edits])
        if _evaluate(new_token) != new_value.decode("utf-8"):
            return None
    return Fix(fix.applicability, tuple(ed for *_, ed in edits), fix.description)


def _apart(edits: list) -> list:
    """The edits, when no two of them are closer than a few units (else none: checked whole)."""
    ordered = sorted(edits, key=lambda e: e[0])
    if any(b[0] - a[1] < 8 for a, b in zip(ordered, ordered[1:])):
        return [None]
    return ordered


def _holds_around(token: bytes, literal_start: int, st, edit) -> bool:
    """Whether one edit of a literal evaluates right around it: the literal's prefix and quotes
    around the unit before the edit, the edit and the unit after it (widened over backslashes
    in a raw literal and over quote characters, which pair with their neighbours), evaluate to
    the value of those units with the edit made. Decoding a literal is local (an escape looks
    ahead a few characters at most, and is whole on each side of the edit), so this holds for
    the whole literal exactly when it holds around the edit."""
    if edit is None:
        return False
    vs, ve, text, ed = edit
    tm, syntax = st.text, st.syntax
    opening = len((syntax.prefix + syntax.quote).encode())
    body_start, body_end = literal_start + opening, literal_start + len(token) - len(syntax.quote)
    quote, pairs = syntax.quote[0].encode(), (b"\\", syntax.quote[0].encode())
    vws, ws = (vs, ed.start)
    if ws > body_start:
        vws, ws = tm.unit_before(vs)
    while ws > body_start and token[ws - 1 - literal_start:ws - literal_start] in pairs:
        vws, ws = tm.unit_before(vws)
    vwe, we = (ve, ed.end)
    if we < body_end:
        vwe, we = tm.unit_after(ve)
    while we < body_end and token[we - literal_start:we - literal_start + 1] == quote:
        vwe, we = tm.unit_after(vwe)
    window = (token[:opening] + token[ws - literal_start:ed.start - literal_start] + ed.text.encode()
              + token[ed.end - literal_start:we - literal_start] + syntax.quote.encode())
    value = tm.value_bytes
    expected = value[vws:vs] + text.encode() + value[ve:vwe]
    return _evaluate(window) == expected.decode("utf-8")


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
