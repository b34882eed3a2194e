"""What every Python rule kind shares: typed `params` (validated when the rule compiles, so a
bad rule file names its field), dispatch by libcst node type, and a cheap pre-filter."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

import msgspec

from ...engine.compiled import CompiledRule, RuleCompileError


class Params(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class CallArg(Params):
    """Where a value sits: an argument (by position and/or keyword) of calls to `callee`
    (qualified names, as imported: `cupy.RawKernel`), optionally under a dict `key`."""

    callee: list[str]
    position: int | None = None
    keyword: str | None = None
    key: str | None = None


class PyRule(CompiledRule):
    """A rule over libcst nodes; `kinds` holds libcst class names (`Call`, `Attribute`, ...)."""

    params_type: ClassVar[type[Params]] = Params

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        try:
            self.params: Any = msgspec.convert(rule.params or {}, self.params_type)
        except msgspec.ValidationError as exc:
            text = str(exc).replace(" - at `$", " - at `params")
            raise RuleCompileError(f"field `params`: {text}") from None
        self.needles: tuple[bytes, ...] = tuple(n.encode() for n in self.file_needles())

    def file_needles(self) -> list[str]:
        """Words of which at least one must occur in a file for the rule to possibly match."""
        return []

    def wants(self, data: bytes) -> bool:
        return not self.needles or any(n in data for n in self.needles)

    def applies_to_fragments(self) -> bool:
        return False


@lru_cache(maxsize=None)
def _last_names(callees: tuple[str, ...]) -> frozenset[str]:
    return frozenset(c.rsplit(".", 1)[-1] for c in callees)


def last_names(specs) -> frozenset[str]:
    return _last_names(tuple(c for spec in specs for c in spec.callee))


def callee_roots(specs) -> list[str]:
    """First components of the callees: the module a file must import for a call to match."""
    return sorted({name.split(".")[0] for spec in specs for name in spec.callee})


def arguments(call, specs, module):
    """(spec, matched callee, argument value) for each spec of `specs` whose callee `call` is
    and whose argument (and dict `key`, if given) the call supplies."""
    from ...lang.python.module import call_argument, dict_entry

    if not module.may_name(call.func, last_names(specs)):
        return
    names = module.qualified_names(call.func)
    if not names:
        return
    for spec in specs:
        hit = names.intersection(spec.callee)
        if not hit:
            continue
        arg = call_argument(call, spec.position, spec.keyword)
        if arg is None:
            continue
        value = arg.value
        if spec.key is not None:
            value = dict_entry(module.resolve(value), spec.key, module)
            if value is None:
                continue
        yield spec, min(hit), value
