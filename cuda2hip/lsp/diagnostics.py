"""Findings as LSP diagnostics: range, severity, code, a link to the rule's docs
(`codeDescription.href`), and the fix the finding carries in the message's tail."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from lsprotocol import types

from ..engine.engine import UNUSED_SUPPRESSION
from ..findings import Finding, Severity
from ..rulebook.docs import rule_docs_url
from .positions import LineIndex

SOURCE = "cuda2hip"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


_DOCS: "WeakKeyDictionary[object, dict]" = WeakKeyDictionary()


def rule_of(engine, code: str):
    """(rule, docs URL) of a finding's code in `engine`'s rules; (None, None) if unknown."""
    table = _DOCS.get(engine)
    if table is None:
        table = _DOCS[engine] = {}
    got = table.get(code)
    if got is None:
        rule = engine.rule_by_code(code)
        got = table[code] = (rule, rule_docs_url(rule) if rule is not None else None)
    return got


def diagnostic(f: Finding, index: LineIndex, shift: int, engine, number: int) -> types.Diagnostic:
    """The diagnostic of finding `f` (offsets into the analysed text, `shift` bytes after the
    start of the editor's: a byte-order mark); `number`: its place in the analysis (`data`)."""
    href = rule_of(engine, f.code)[1]
    return types.Diagnostic(
        range=index.range(f.start + shift, f.end + shift),
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        tags=[types.DiagnosticTag.Unnecessary] if f.rule_id == UNUSED_SUPPRESSION else None,
        data={"finding": number},
    )


def problem(message: str, severity=types.DiagnosticSeverity.Error) -> types.Diagnostic:
    """A file `check` could not analyse (its configuration, its content, an internal error):
    one diagnostic at the start of the file saying why, as `check` names the file and reason."""
    start = types.Position(line=0, character=0)
    return types.Diagnostic(range=types.Range(start=start, end=start), message=f"cuda2hip: {message}",
                            severity=severity, source=SOURCE)
