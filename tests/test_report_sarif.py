"""SARIF 2.1.0 output: valid against the OASIS schema, and shaped as GitHub code scanning reads it."""

from __future__ import annotations

import json

from conftest import run_cli
from report_helpers import SELECT, copy_project, sarif_schema_errors


def _sarif(project, *args, cwd=None, exit_code=1):
    r = run_cli("check", "--select", SELECT, "--format", "sarif", *args, cwd=cwd or project)
    assert r.returncode == exit_code, r.stderr
    return json.loads(r.stdout)


def _json(project, *args, cwd=None):
    r = run_cli("check", "--select", SELECT, "--format", "json", *args, cwd=cwd or project)
    return json.loads(r.stdout)


def test_sarif_validates_against_the_2_1_0_schema(tmp_path):
    project = copy_project(tmp_path)
    (project / "src" / "bad.cu").write_bytes("int café;\n".encode("utf-16"))  # a file error -> a notification
    sarif = _sarif(project, "--isolated", ".", exit_code=2)
    errors = sarif_schema_errors(sarif)
    assert not errors, "\n".join(errors[:10])
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["locations"][0][
        "physicalLocation"]["artifactLocation"]["uri"] == "src/bad.cu"


def test_sarif_has_what_github_code_scanning_reads(tmp_path):
    project = copy_project(tmp_path)
    sarif = _sarif(project, "--isolated", ".")
    data = _json(project, "--isolated", ".")
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(SELECT.split(","))
    for rule in rules:
        for key in ("id", "name", "shortDescription", "fullDescription", "help", "helpUri", "defaultConfiguration"):
            assert rule.get(key), f"{rule['id']}: no {key}"
        assert rule["help"]["markdown"].startswith(f"# {rule['id']} {rule['name']}")
        assert rule["helpUri"].startswith("https://")
    hip102 = next(r for r in rules if r["id"] == "HIP102")
    assert hip102["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    # Every finding, the suppressed one too, marked with suppressions[].
    assert len(results) == data["summary"]["findings"] + data["summary"]["suppressed"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert len(suppressed) == data["summary"]["suppressed"] == 1
    assert suppressed[0]["suppressions"] == [{"kind": "inSource", "status": "accepted"}]
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert (project / loc["artifactLocation"]["uri"]).is_file()
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    fps = [r["partialFingerprints"]["cuda2hip/v1"] for r in results]
    assert len(set(fps)) == len(fps)
    # The same finding as JSON and as SARIF: same position, level mapped.
    first = data["findings"][0]
    res = next(r for r in results if r["ruleId"] == first["code"]
               and r["locations"][0]["physicalLocation"]["region"]["startLine"] == first["line"])
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startColumn"], region["endLine"], region["endColumn"]) == (
        first["column"], first["end_line"], first["end_column"])
    assert run["properties"]["summary"] == data["summary"]


def test_sarif_uris_are_relative_to_the_project_root_not_the_cwd(tmp_path):
    project = copy_project(tmp_path)
    (project / "cuda2hip.toml").write_text(f"select = {SELECT.split(',')!r}\n".replace("'", '"'))
    sarif = _sarif(project, "kernels.cu", cwd=project / "src")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"src/kernels.cu"}


def test_sarif_columns_count_code_points(tmp_path):
    project = copy_project(tmp_path)
    f = project / "src" / "utf8.cu"
    f.write_text("/* héllo ✓ */ cudaStream_t s;\n", encoding="utf-8")
    sarif = _sarif(project, "--isolated", "src/utf8.cu")
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startColumn"], region["endColumn"]) == (15, 27)  # code points, not bytes (18)


def test_sarif_uri_is_percent_encoded(tmp_path):
    project = copy_project(tmp_path)
    (project / "src" / "my kernels.cu").write_text("cudaStream_t s;\n")
    sarif = _sarif(project, "--isolated", "src")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert "src/my%20kernels.cu" in uris
