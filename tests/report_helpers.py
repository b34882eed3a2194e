"""Helpers for the report tests: a copy of the report fixture project and golden files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, INSTALL_TEST_DEPS, ROOT

PROJECT = FIXTURES / "reports" / "project"
EXPECTED = FIXTURES / "reports" / "expected"
# Golden outputs depend on these rules only, so rules other issues add do not change them.
SELECT = "HIP001,HIP002,HIP003,HIP100,HIP101,HIP102"


def copy_project(tmp_path: Path) -> Path:
    """The report fixture project, as a repository (its root is the project root, whatever
    folder a run starts from)."""
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    (dest / ".git").mkdir()
    return dest


def assert_golden(name: str, actual: str) -> None:
    """Compare with fixtures/reports/expected/NAME; UPDATE_GOLDEN=1 rewrites the file instead."""
    path = EXPECTED / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it after review)"


# Microsoft's SARIF Multitool and the SARIF 2.1.0 schema its package carries, fetched by
# tests/harness/fetch_sarif_multitool.py (tools/install-test-deps.sh runs it).
SARIF_MULTITOOL = Path(os.environ.get("CUDA2HIP_SARIF_MULTITOOL", ROOT / ".cache" / "sarif-multitool"))
FETCH_SARIF_MULTITOOL = "python tests/harness/fetch_sarif_multitool.py .cache/sarif-multitool"
# Warnings of `Sarif.Multitool validate` that cuda2hip's logs may carry, and why. Errors (schema
# JSON1xxx, specification SARIF1xxx, GitHub ingestion GH1xxx) never; notes are style advice
# (message ids instead of text, snippets, Pascal-case rule names, version control details, a
# reachable $schema URL) and are not checked.
ACCEPTED_WARNINGS = {
    # tool.driver.informationUri: cuda2hip's package metadata names no public home page, and the
    # log states none rather than invent one.
    "SARIF2005",
}
# The Multitool's policy: SARIF2006 (URIs should be reachable, a note) requests every URI of the
# log ($schema, helpUri); tests make no network requests.
MULTITOOL_POLICY = """<?xml version="1.0" encoding="utf-8"?>
<Properties>
  <Properties Key="SARIF2006.UrisShouldBeReachable.Options">
    <Property Key="RuleEnabled" Value="Disabled" />
  </Properties>
</Properties>
"""


def _multitool_folder() -> Path:
    if not (SARIF_MULTITOOL / "Sarif.Multitool").is_file():
        pytest.skip(f"SARIF Multitool not found in {SARIF_MULTITOOL} (fetch it: {FETCH_SARIF_MULTITOOL}; "
                    f"every test tool at once: {INSTALL_TEST_DEPS})")
    return SARIF_MULTITOOL


def sarif_schema_errors(sarif: dict) -> list[str]:
    """Errors of `sarif` against the SARIF 2.1.0 JSON schema of the Multitool's package (draft
    2020-12, formats checked where jsonschema can); skips the test where it is not fetched."""
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads((_multitool_folder() / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    return [f"{list(e.path)}: {e.message}" for e in errors]


def sarif_multitool_problems(sarif: dict, tmp_path: Path) -> list[str]:
    """What `Sarif.Multitool validate` (schema, SARIF specification and GitHub ingestion rules)
    reports about `sarif` beyond ACCEPTED_WARNINGS: every error and warning, and any failure of
    the tool itself. A log it cannot read into its object model (an unknown enum value) it passes
    over without a word, so tests check `sarif_schema_errors` too. Skips the test where the
    Multitool is not fetched."""
    import json
    import subprocess

    from harness.fetch_sarif_multitool import ENV

    tool = _multitool_folder() / "Sarif.Multitool"
    log, out = tmp_path / "validated.sarif", tmp_path / "validation.sarif"
    log.write_text(json.dumps(sarif, indent=2), encoding="utf-8")
    policy = tmp_path / "sarif-multitool-policy.xml"
    policy.write_text(MULTITOOL_POLICY, encoding="utf-8")
    proc = subprocess.run([str(tool), "validate", str(log), "--output", str(out), "--log", "ForceOverwrite",
                           "--config", str(policy), "--level", "Error;Warning", "--rule-kind", "Sarif;Gh"],
                          capture_output=True, text=True, env={**os.environ, **ENV}, timeout=300)
    said = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 or not out.is_file():
        return [f"Sarif.Multitool validate failed (exit {proc.returncode}): {said[-2000:]}"]
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    problems = [f"{r['ruleId']} ({r.get('level', 'warning')}): {_message(r, run)}" for r in run.get("results", [])
                if r.get("level", "warning") == "error" or r["ruleId"] not in ACCEPTED_WARNINGS]
    for invocation in run.get("invocations", []):
        if not invocation.get("executionSuccessful"):
            problems.append(f"the validation did not complete: {said[-2000:]}")
        for note in (invocation.get("toolExecutionNotifications", [])
                     + invocation.get("toolConfigurationNotifications", [])):
            disabled = note.get("descriptor", {}).get("id") == "WRN999.RuleExplicitlyDisabled"  # the policy's
            if note.get("level", "warning") in ("error", "warning") and not disabled:
                problems.append(f"the validator: {note['message'].get('text', note['message'])}")
    return problems


def _message(result: dict, run: dict) -> str:
    """A result's message text: given, or its rule's message string filled with the arguments."""
    message = result["message"]
    if "text" in message:
        return message["text"]
    rule = next((r for r in run["tool"]["driver"].get("rules", []) if r["id"] == result["ruleId"]), {})
    template = rule.get("messageStrings", {}).get(message.get("id"), {}).get("text", message.get("id", ""))
    for i, arg in enumerate(message.get("arguments", [])):
        template = template.replace(f"{{{i}}}", arg)
    return template


def html_page_data(page: str) -> dict:
    """The findings data of an HTML report (the JSON its script draws the findings from)."""
    import json
    import re

    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m, "no report data in the page"
    return json.loads(m.group(1))
