"""`nvcc-flags` rule kind: nvcc options in Python build scripts (`CUDAExtension(...,
extra_compile_args={"nvcc": [...]})`, `load(..., extra_cuda_cflags=[...])`).

On a ROCm build of PyTorch these lists go to hipcc (torch.utils.cpp_extension), which does not
know nvcc's options. Each flag of the table is reported with what it means for hipcc; a flag
with a hipcc spelling is rewritten (`replace`, by value), a flag with no meaning there can be
removed (`remove`). A flag's value may be joined by `=`, follow after a space in the same
string, or be the next list element (`"-gencode", "arch=compute_80,code=sm_80"`).
"""

from __future__ import annotations

from typing import Literal

from ...engine.compiled import rule_kind
from ...findings import Edit
from .base import CallArg, Params, PyRule, arguments, callee_roots


class FlagSpec(Params):
    names: list[str]
    note: str
    value: bool = False  # the flag takes a value
    replace: dict[str, str] | None = None  # value ("" for a flag without value) -> hipcc flag
    remove: bool = False
    applicability: Literal["safe", "unsafe"] = "unsafe"


class FlagsParams(Params):
    lists: list[CallArg]
    flags: list[FlagSpec]


@rule_kind("nvcc-flags")
class NvccFlagsRule(PyRule):
    kinds = frozenset({"Call"})
    params_type = FlagsParams

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.by_name = {name: spec for spec in self.params.flags for name in spec.names}

    def file_needles(self):
        return callee_roots(self.params.lists)

    def visit(self, call, ctx):
        module = ctx.module
        for _, where, value in arguments(call, self.params.lists, module):
            for flags in _lists(value, module):
                key = ("nvcc-flags", self.code, module.span(flags))
                if key not in ctx.cache:
                    ctx.cache[key] = True
                    self._check_list(flags, where, ctx)

    def _check_list(self, flags, where: str, ctx) -> None:
        import libcst as cst

        from ...lang.python.strings import literal_text

        module = ctx.module
        elements = list(flags.elements)
        texts = []
        for el in elements:
            lit = el.value if isinstance(el, cst.Element) else None
            st = literal_text(lit, module) if isinstance(lit, cst.SimpleString) else None
            texts.append(st.text.value if st is not None and st.rewritable else None)
        i = 0
        while i < len(elements):
            text = texts[i]
            spec, flag, value, last = None, None, None, i
            if text is not None:
                first, _, rest = text.strip().partition(" ")
                flag, eq, inline = first.partition("=")
                spec = self.by_name.get(flag)
                if spec is not None and spec.value:
                    if eq:
                        value = inline
                    elif rest.strip():
                        value = rest.strip()
                    elif i + 1 < len(elements) and texts[i + 1] is not None:
                        value, last = texts[i + 1], i + 1
            if spec is None:
                i += 1
                continue
            self._report(spec, flag, value, elements, i, last, texts, where, ctx)
            i = last + 1

    def _report(self, spec, flag, value, elements, i, last, texts, where, ctx) -> None:
        module = ctx.module
        start = module.span(elements[i].value)[0]
        end = module.span(elements[last].value)[1]
        written = " ".join(t for t in texts[i:last + 1])
        edits = None
        replacement = None
        if spec.replace is not None:
            replacement = spec.replace.get(value or "")
            if replacement is not None:
                syntax = elements[i].value
                quote = syntax.quote
                edits = [Edit(start, end, f"{syntax.prefix}{quote}{replacement}{quote}")]
        elif spec.remove:
            edits = _removal(elements, i, last, module)
        if edits and any(b"#" in ctx.source.data[e.start:e.end] for e in edits):
            edits = None  # never drop a comment along with a flag
        msg = self.message(FLAG=written, NOTE=spec.note, CALL=where, HIP=replacement or "")
        desc = f"Use `{replacement}`" if replacement else ("Remove the flag" if edits else "")
        ctx.report(self, start, end, msg, edits=edits, applicability=spec.applicability if edits else None,
                   description=desc, data={"flag": flag, "value": value})


def _lists(expr, module, depth: int = 6):
    """List and tuple displays an expression is made of (names followed, `+` operands)."""
    import libcst as cst

    expr = module.resolve(expr)
    if isinstance(expr, (cst.List, cst.Tuple)):
        yield expr
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add) and depth > 0:
        yield from _lists(expr.left, module, depth - 1)
        yield from _lists(expr.right, module, depth - 1)


def _removal(elements, i: int, last: int, module) -> list[Edit]:
    """Edit that removes elements i..last with their separating comma."""
    if last + 1 < len(elements):
        return [Edit(module.span(elements[i])[0], module.span(elements[last + 1])[0], "")]
    end = module.span(elements[last].value)[1]
    if i > 0:
        return [Edit(module.span(elements[i - 1].value)[1], end, "")]
    return [Edit(module.span(elements[i])[0], module.span(elements[last])[1], "")]
