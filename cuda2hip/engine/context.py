"""Per-file matching context: the text, the tree, settings, and the helpers rules use to turn a
match into a finding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import tree_sitter as ts
from msgspec import Struct, field

from ..findings import Applicability, Edit, Finding, Fix, Severity
from ..lang.source import SourceText
from ..settings import Settings

if TYPE_CHECKING:
    from .compiled import CompiledRule


class FileContext(Struct):
    source: SourceText
    tree: ts.Tree
    language: str
    settings: Settings
    # A context may cover a fragment of the file (a macro body re-parsed on its own): `data` is
    # the fragment's bytes and `base` its offset in the file.
    data: bytes = b""
    base: int = 0
    parent: "FileContext | None" = None
    cache: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def __post_init__(self):
        if not self.data and self.base == 0:
            self.data = self.source.data

    @property
    def is_fragment(self) -> bool:
        return self.parent is not None

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def file_cache(self) -> dict[str, Any]:
        """Cache shared by the whole file (fragments included), for translation-unit analyses."""
        ctx = self
        while ctx.parent is not None:
            ctx = ctx.parent
        return ctx.cache

    @property
    def file_context(self) -> "FileContext":
        ctx = self
        while ctx.parent is not None:
            ctx = ctx.parent
        return ctx

    def node_text(self, node: ts.Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", errors="replace")

    def options(self, rule: "CompiledRule") -> dict[str, Any]:
        merged = dict(rule.rule.options)
        for key in (rule.code, rule.id):
            merged.update(self.settings.rule_options.get(key, {}))
        return merged

    def fragment(self, node: ts.Node, tree: ts.Tree) -> "FileContext":
        return FileContext(
            source=self.source, tree=tree, language=self.language, settings=self.settings,
            data=self.data[node.start_byte:node.end_byte], base=self.base + node.start_byte,
            parent=self, findings=self.findings,
        )

    def report(
        self,
        rule: "CompiledRule",
        start: int,
        end: int,
        message: str,
        *,
        edits: list[Edit] | None = None,
        applicability: str | Applicability | None = None,
        description: str = "",
        effort: str | None = None,
        severity: Severity | None = None,
        data: dict | None = None,
    ) -> Finding:
        """Record a finding; offsets and edits are relative to this context's data."""
        fix = None
        if edits is not None:
            app = Applicability(applicability) if applicability else rule.applicability
            if app is None:
                app = Applicability.DISPLAY_ONLY
            if self.base:
                edits = [e.shifted(self.base) for e in edits]
            if len(edits) > 1:
                edits = sorted(edits, key=lambda e: (e.start, e.end))
            fix = Fix(app, tuple(edits), description)
        start += self.base
        end += self.base
        line, col, end_line, end_col = self.source.span(start, end)
        finding = Finding(
            code=rule.code, rule_id=rule.id, severity=severity if severity is not None else rule.severity,
            path=self.source.path, start=start, end=end, line=line, column=col, end_line=end_line,
            end_column=end_col, message=message, fix=fix, effort=effort or rule.effort,
            extra=data or {},
        )
        self.findings.append(finding)
        return finding
