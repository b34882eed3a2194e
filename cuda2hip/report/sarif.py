"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.

Rules carry their documentation (`help.markdown` from rulebook/docs.py), a `helpUri` to cuda2hip's
own page of the rule when a base for them is known (rulebook/docs.py `rule_page_url`), and metadata
(`defaultConfiguration.level`, `properties.tags` / `precision`). Results carry a repo-relative
location (against `%SRCROOT%` = the project root), a region whose columns count Unicode code
points (`columnKind`), `partialFingerprints` that survive line shifts, and the finding's fix as
`fixes[]`. Suppressed findings are included with `suppressions[]` (GitHub shows them as dismissed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from .fingerprint import VERSION, fingerprints
from .sources import Sources, repo_rel
from .summary import summarize

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
ROOT_ID = "%SRCROOT%"
# How sure a finding of each kind is (GitHub code scanning's `precision`): the name tables and
# header maps are exact look-ups; names no table knows and names in strings may be the project's
# own; the others are syntactic checks of one construct.
PRECISION = {"rename": "very-high", "unmapped": "very-high", "include": "very-high", "legacy-api": "very-high",
             "unknown-cuda-name": "medium", "unknown-cuda-header": "medium", "cuda-name-in-string": "medium"}


def rule_descriptor(rule) -> dict:
    from ..rulebook.docs import rule_markdown, rule_page_url

    markdown = rule_markdown(rule)
    fix = rule.fix.applicability if rule.fix else "none"
    desc = {
        "id": rule.code,
        "name": rule.id,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.docs.what.split())},
        "help": {"text": markdown, "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.enabled},
        "properties": {"tags": ["cuda-to-hip", f"language:{rule.language}", f"kind:{rule.kind}",
                                f"effort:{rule.effort}", f"fix:{fix}"],
                       "precision": PRECISION.get(rule.kind, "high"),
                       "effort": rule.effort, "fix": fix},
    }
    uri = rule_page_url(rule)
    if uri:
        desc["helpUri"] = uri
    return desc


def _region(src, start: int, end: int) -> dict:
    """The SARIF region of bytes [start, end) of `src`'s UTF-8 data: lines and code-point columns
    (endColumn is the column after the region: an insertion has startColumn == endColumn) and the
    byte offsets into the file as stored (after a UTF-8 BOM; in an 8-bit encoding, one byte per
    character)."""
    line, col, end_line, end_col = src.span(start, end)

    def file_offset(offset: int) -> int:
        if src.encoding != "utf-8":
            return len(src.data[:offset].decode("utf-8", "replace"))
        return offset + (3 if src.bom else 0)

    first = file_offset(start)
    return {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col,
            "byteOffset": first, "byteLength": file_offset(end) - first}


def _fixes(f, src, location: dict) -> list[dict]:
    """`fixes[]` of a finding: its edits as replacements in the file the finding is in."""
    if f.fix is None or src is None or any(e.end > len(src.data) or e.start > e.end for e in f.fix.edits):
        return []
    kind = f.fix.applicability.value
    what = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": "suggestion"}[kind]
    replacements = []
    for e in f.fix.edits:
        r = {"deletedRegion": _region(src, e.start, e.end)}
        if e.text:
            r["insertedContent"] = {"text": e.text}
        replacements.append(r)
    return [{"description": {"text": f"{f.fix.description or 'Fix'} ({what})"},
             "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
             "properties": {"applicability": kind}}]


def _uri(path: str, root: Path) -> str:
    return quote(os.fsencode(repo_rel(path, root)), safe="/")  # the name's own bytes, escaped


def render(run, ctx) -> str:
    root = Path(ctx.settings.root)
    engine = ctx.engine
    codes = sorted({r.code for r in engine.selected} | {f.code for f in run.findings})
    rules = [r for r in (engine.rule_by_code(c) for c in codes) if r is not None]
    index = {r.code: i for i, r in enumerate(rules)}
    sources = Sources(run)
    prints = fingerprints(run.findings, root, sources)
    results = []
    for f in sorted(run.findings, key=lambda f: f.sort_key):
        region = {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line, "endColumn": f.end_column}
        location = {"uri": _uri(f.path, root), "uriBaseId": ROOT_ID}
        result = {
            "ruleId": f.code,
            "level": LEVELS[f.severity.label],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": region,
            }}],
            "partialFingerprints": {VERSION: prints[id(f)]},
            "properties": {"effort": f.effort,
                           "fix": f.fix.applicability.value if f.fix is not None else "none"},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.suppressed:
            result["suppressions"] = [{"kind": "inSource", "status": "accepted"}]
        fixes = _fixes(f, sources.get(f.path), location) if f.fix is not None else []
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    notifications = [{
        "level": "error",
        "message": {"text": e.reason},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(e.path, root), "uriBaseId": ROOT_ID}}}],
    } for e in run.errors]
    sarif = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cuda2hip",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [rule_descriptor(r) for r in rules],
            }},
            "invocations": [{"executionSuccessful": not run.errors,
                             "toolExecutionNotifications": notifications}],
            "originalUriBaseIds": {ROOT_ID: {"uri": root.resolve().as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"targetRocm": ctx.settings.target_rocm, "summary": summarize(run, ctx.settings)},
        }],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"
