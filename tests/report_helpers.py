"""Helpers for the report tests: a copy of the report fixture project and golden files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, REFERENCE

PROJECT = FIXTURES / "reports" / "project"
EXPECTED = FIXTURES / "reports" / "expected"
# Golden outputs depend on these rules only, so rules other issues add do not change them.
SELECT = "HIP001,HIP002,HIP003,HIP100,HIP101,HIP102"


def copy_project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    return dest


def assert_golden(name: str, actual: str) -> None:
    """Compare with fixtures/reports/expected/NAME; UPDATE_GOLDEN=1 rewrites the file instead."""
    path = EXPECTED / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it after review)"


# (CUDA2HIP_SARIF_SCHEMA: the schema elsewhere, e.g. for a checkout without shared/ beside it)
SARIF_SCHEMA = Path(os.environ.get("CUDA2HIP_SARIF_SCHEMA", REFERENCE / "sarif" / "sarif-schema-2.1.0.json"))


def sarif_schema_errors(sarif: dict) -> list[str]:
    """Errors of `sarif` against the OASIS SARIF 2.1.0 schema (read from shared/reference,
    never copied into the project); skips the test where the schema is absent."""
    import json

    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (shared/reference beside the checkout)")
    from jsonschema import Draft4Validator

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    errors = sorted(Draft4Validator(schema).iter_errors(sarif), key=lambda e: list(e.path))
    return [f"{list(e.path)}: {e.message}" for e in errors]


def html_page_data(page: str) -> dict:
    """The findings data of an HTML report (the JSON its script draws the findings from)."""
    import json
    import re

    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m, "no report data in the page"
    return json.loads(m.group(1))
