"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.

Rules carry their documentation (`help.markdown` from rulebook/docs.py); results carry a
repo-relative location (against `%SRCROOT%` = the project root), a region whose columns count
Unicode code points (`columnKind`), and `partialFingerprints` that survive line shifts.
Suppressed findings are included with `suppressions[]` (GitHub shows them as dismissed).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from .fingerprint import VERSION, fingerprints
from .sources import Sources, repo_path, repo_rel
from .summary import summarize

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
ROOT_ID = "%SRCROOT%"
_URL = re.compile(r"https?://[^\s)>\]\"']+")


def _help_uri(rule) -> str | None:
    """The first source the rule's docs cite: a public page about the finding's subject."""
    for ref in rule.docs.references:
        m = _URL.search(ref)
        if m:
            return m.group(0).rstrip(".,;")
    return None


def rule_descriptor(rule) -> dict:
    from ..rulebook.docs import rule_markdown

    markdown = rule_markdown(rule)
    desc = {
        "id": rule.code,
        "name": rule.id,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.docs.what.split())},
        "help": {"text": markdown, "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.enabled},
        "properties": {"tags": [rule.language, rule.kind], "effort": rule.effort,
                       "fix": rule.fix.applicability if rule.fix else "none"},
    }
    uri = _help_uri(rule)
    if uri:
        desc["helpUri"] = uri
    return desc


def _uri(path: str, root: Path) -> str:
    return quote(os.fsencode(repo_rel(path, root)), safe="/")  # the name's own bytes, escaped


def render(run, ctx) -> str:
    root = Path(ctx.settings.root)
    engine = ctx.engine
    codes = sorted({r.code for r in engine.selected} | {f.code for f in run.findings})
    rules = [r for r in (engine.rule_by_code(c) for c in codes) if r is not None]
    index = {r.code: i for i, r in enumerate(rules)}
    prints = fingerprints(run.findings, root, Sources(run))
    results = []
    for f in sorted(run.findings, key=lambda f: f.sort_key):
        region = {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line, "endColumn": f.end_column}
        result = {
            "ruleId": f.code,
            "level": LEVELS[f.severity.label],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(f.path, root), "uriBaseId": ROOT_ID},
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
            "properties": {"summary": summarize(run, ctx.settings.fail_on)},
        }],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"
