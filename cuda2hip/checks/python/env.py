"""`environment` rule kind: environment variables set or read from Python.

Recognised: `os.environ["VAR"]` (read or assigned), `os.environ.get/setdefault/pop("VAR", v)`,
`os.getenv/putenv("VAR", v)`, `monkeypatch.setenv("VAR", v)` (any call whose first argument is
the name; the second is its value), dict entries `{"VAR": v}` (e.g. `env=` of subprocess),
keyword arguments `VAR=v` (`os.environ.update(VAR=v)`, `dict(os.environ, VAR=v)`), and shell
assignments `VAR=value` inside strings (`"VAR=1 python run.py"`).

`report: name` reports every use of the variable; `report: value` reports string values that
match `value_regex` or fail `value_not_regex`, with `$NOTE` from the first matching `notes`
entry and `$SUGGEST` from the named `suggest` transform.
"""

from __future__ import annotations

import re
from typing import Literal

from ...engine.compiled import RuleCompileError, rule_kind
from .base import Params, PyRule


class Note(Params):
    regex: str
    note: str


class EnvParams(Params):
    variables: list[str]
    report: Literal["name", "value"] = "name"
    value_regex: str | None = None
    value_not_regex: str | None = None
    notes: list[Note] = []
    suggest: Literal["gfx-version"] | None = None


@rule_kind("environment")
class EnvironmentRule(PyRule):
    kinds = frozenset({"SimpleString", "Arg", "FormattedString"})
    params_type = EnvParams

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        p = self.params
        from ...engine.rule_regex import UnsafeRegexError, compile_rule_regex

        def compiled(pattern):
            return compile_rule_regex(pattern, trusted=rule.builtin) if pattern else None

        try:
            self.value_re = compiled(p.value_regex)
            self.value_not_re = compiled(p.value_not_regex)
            self.notes = [(compiled(n.regex), n.note) for n in p.notes]
        except UnsafeRegexError as exc:
            raise RuleCompileError(f"field `params`: {exc}") from None
        if p.report == "value" and not (self.value_re or self.value_not_re):
            raise RuleCompileError("field `params`: `report: value` needs `value_regex` or `value_not_regex`")
        names = "|".join(re.escape(v) for v in p.variables)
        self.shell = re.compile(rf"(?:^|(?<=[\s;&|(]))(?P<var>{names})=(?P<q>['\"]?)(?P<value>[^\s;&|'\"]*)(?P=q)")
        self.variables = set(p.variables)

    def file_needles(self):
        return list(self.params.variables)

    def visit(self, node, ctx):
        import libcst as cst

        from ...lang.python.strings import literal_text, text_of

        module = ctx.module
        if isinstance(node, cst.Arg):
            if node.keyword is not None and node.keyword.value in self.variables:
                self._use(node.keyword.value, node.keyword, node.value, ctx)
            return
        if isinstance(node, cst.SimpleString):
            st = literal_text(node, module)
            if st.text.value in self.variables:
                self._use(st.text.value, node, _value_of(node, module), ctx)
                return
        else:
            st = text_of(node, module)
            if st is None:
                return
        for m in self.shell.finditer(st.text.value):
            var, value = m.group("var"), m.group("value")
            vs = len(st.text.value[:m.start()].encode())
            ve = len(st.text.value[:m.end()].encode())
            self._report(var, value, st.text.start(vs), st.text.end(ve), ctx)

    def _use(self, var, name_node, value_node, ctx):
        module = ctx.module
        if self.params.report == "name":
            start, end = module.span(name_node)
            self._report(var, None, start, end, ctx)
            return
        if value_node is None:
            return
        from ...lang.python.module import string_value

        value_node = module.resolve(value_node)
        value = string_value(value_node)
        if value is None:
            return
        start, end = module.span(value_node)
        self._report(var, value, start, end, ctx)

    def _report(self, var, value, start, end, ctx):
        if self.params.report == "value":
            if value is None:
                return
            if self.value_re is not None and not self.value_re.search(value):
                return
            if self.value_not_re is not None and self.value_not_re.search(value):
                return
        note = next((n for r, n in self.notes if value is not None and r.search(value)), "")
        suggest = _SUGGEST[self.params.suggest](value) if self.params.suggest and value is not None else ""
        msg = self.message(VAR=var, VALUE=value or "", NOTE=note, SUGGEST=suggest)
        ctx.report(self, start, end, msg, data={"variable": var, "value": value})


def _value_of(name_node, module):
    """The value given to the variable named by this string literal, if the code shows it."""
    import libcst as cst

    parent = module.parent(name_node)
    if isinstance(parent, cst.DictElement) and parent.key is name_node:
        return parent.value
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = module.parent(parent)
        if isinstance(call, cst.Call):
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if positional and positional[0] is parent and len(positional) > 1:
                return positional[1].value
        return None
    if isinstance(parent, cst.Index):
        element = module.parent(parent)
        subscript = module.parent(element) if element is not None else None
        target = module.parent(subscript) if subscript is not None else None
        if isinstance(target, cst.AssignTarget):
            stmt = module.parent(target)
            if isinstance(stmt, cst.Assign):
                return stmt.value
    return None


def _gfx_version(value: str) -> str:
    """`HSA_OVERRIDE_GFX_VERSION` spelling of a gfx target name: gfx1100 / 1100 -> 11.0.0,
    gfx942 -> 9.4.2, gfx90a -> 9.0.10 (the last two characters are minor and stepping, hex)."""
    digits = value.strip().lower().removeprefix("gfx")
    if not re.fullmatch(r"[0-9]{1,2}[0-9a-f]{2}", digits):
        return "major.minor.stepping, e.g. \"11.0.0\""
    major, minor, step = digits[:-2], digits[-2], digits[-1]
    return f"\"{int(major)}.{int(minor, 16)}.{int(step, 16)}\" (gfx{digits})"


_SUGGEST = {"gfx-version": _gfx_version}
