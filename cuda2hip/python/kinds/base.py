"""What every Python rule kind shares: typed `params` (validated when the rule compiles, so a
bad rule file names its field), dispatch by libcst node type, and a cheap pre-filter."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from ...match.compiled import CompiledRule, RuleCompileError


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


def callee_roots(specs) -> list[str]:
    """First components of the callees: the module a file must import for a call to match."""
    return sorted({name.split(".")[0] for spec in specs for name in spec.callee})


def matching_specs(call, specs, module) -> list:
    names = module.qualified_names(call.func)
    if not names:
        return []
    return [s for s in specs if names.intersection(s.callee)]


def matched_callee(call, spec, module) -> str:
    """The qualified name under which `call` matched `spec`."""
    return min(module.qualified_names(call.func).intersection(spec.callee))
