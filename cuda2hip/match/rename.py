"""`rename` and `unmapped` rule kinds: whole-identifier look-ups in CUDA -> HIP name tables.

Only identifier, type, field and namespace nodes are looked at (plus identifier tokens of macro
bodies), so comments, string and character literals are never touched, and a user name that
merely contains a CUDA name (`my_cudaStream_t`) is a different identifier and never matches.
"""

from __future__ import annotations

from ..findings import Edit
from .api_tables import ApiEntry, load_table, resolve_tables, version_tuple
from .compiled import CompiledRule, RuleCompileError, rule_kind

IDENTIFIER_KINDS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier"})


class _TableRule(CompiledRule):
    kinds = IDENTIFIER_KINDS
    wants_tokens = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if not rule.tables and not rule.names:
            raise RuleCompileError("field `tables`: a rename rule needs `tables` or `names`")
        self.entries: dict[bytes, ApiEntry] = {}
        for path in resolve_tables(rule.source_path, rule.tables or []):
            self.entries.update(load_table(path))
        for cuda, hip in (rule.names or {}).items():
            self.entries[cuda.encode()] = ApiEntry(cuda, hip, "name", "user", "", "", "", "", "",
                                                   "", "", "", "", False, None, "")
        self.target = version_tuple(settings.target_rocm) if settings.target_rocm else None
        self.texts = frozenset(self.entries)
        self._texts: dict[str, tuple[str, str]] = {}  # name -> (message, fix description)

    def applies_to_fragments(self) -> bool:
        # Macro bodies are covered token by token (see `token`), which also works where the body
        # is not a complete statement; the fragment tree would see the same names twice.
        return False

    def visit(self, node, ctx):
        start, end = node.start_byte, node.end_byte
        entry = self.entries.get(ctx.data[start:end])
        if entry is not None:
            self.check(entry, start, end, ctx)

    def token(self, start, end, name, ctx):
        entry = self.entries.get(name)
        if entry is not None:
            self.check(entry, start, end, ctx)

    def available(self, entry: ApiEntry) -> bool:
        """Whether the HIP name exists in the targeted ROCm version (and is not experimental
        unless experimental mappings are allowed)."""
        if entry.hip is None:
            return False
        if entry.experimental and not self.settings.experimental:
            return False
        if self.target is not None:
            added = version_tuple(entry.hip_added) if entry.hip_added else ()
            if added and added > self.target:
                return False
            removed = version_tuple(entry.hip_removed) if entry.hip_removed else ()
            if removed and removed <= self.target:
                return False
        return True

    def check(self, entry: ApiEntry, start: int, end: int, ctx) -> None:
        raise NotImplementedError


@rule_kind("rename")
class RenameRule(_TableRule):
    """Report CUDA names with a HIP equivalent and rename them."""

    def check(self, entry, start, end, ctx):
        if entry.hip == entry.cuda or not self.available(entry):
            return
        texts = self._texts.get(entry.cuda)
        if texts is None:  # a rename-heavy file reports the same few names many times
            texts = self._texts[entry.cuda] = (
                self.message(NAME=entry.cuda, HIP=entry.hip, SECTION=entry.section, LIBRARY=entry.library),
                f"Rename to `{entry.hip}`")
        ctx.report(self, start, end, texts[0], edits=[Edit(start, end, entry.hip)], description=texts[1])


@rule_kind("unmapped")
class UnmappedRule(_TableRule):
    """Report CUDA names that have no HIP equivalent (or none in the targeted ROCm version)."""

    def check(self, entry, start, end, ctx):
        if entry.hip is not None and self.available(entry):
            return
        if entry.hip is None:
            reason = "no HIP equivalent"
        elif entry.experimental and not self.settings.experimental:
            reason = f"HIP's `{entry.hip}` is experimental (enable with --experimental)"
        elif entry.hip_removed and self.target and version_tuple(entry.hip_removed) <= self.target:
            reason = f"HIP's `{entry.hip}` was removed in ROCm {entry.hip_removed}"
        else:
            reason = f"HIP's `{entry.hip}` needs ROCm {entry.hip_added} (target is {self.settings.target_rocm})"
        msg = self.message(NAME=entry.cuda, REASON=reason, SECTION=entry.section, LIBRARY=entry.library)
        ctx.report(self, start, end, msg, data={"reason": reason, "library": entry.library})
