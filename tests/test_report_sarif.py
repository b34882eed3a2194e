"""SARIF 2.1.0 output: valid as SARIF's own validator (Microsoft's SARIF Multitool) and the SARIF
2.1.0 JSON schema judge it, and shaped as GitHub code scanning reads it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from report_helpers import SELECT, copy_project, sarif_multitool_problems, sarif_schema_errors


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
    problems = sarif_multitool_problems(sarif, tmp_path)
    assert not problems, "\n".join(problems[:10])
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
        for key in ("id", "name", "shortDescription", "fullDescription", "help", "defaultConfiguration"):
            assert rule.get(key), f"{rule['id']}: no {key}"
        assert rule["help"]["markdown"].startswith(f"# {rule['id']} {rule['name']}")
        assert "helpUri" not in rule  # no public base for cuda2hip's rule pages configured (see below)
        props = rule["properties"]
        assert props["precision"] in ("very-high", "high", "medium") and "cuda-to-hip" in props["tags"]
        assert f"fix:{props['fix']}" in props["tags"] and f"effort:{props['effort']}" in props["tags"]
    hip102 = next(r for r in rules if r["id"] == "HIP102")
    assert hip102["defaultConfiguration"]["level"] == "error"
    assert hip102["properties"]["precision"] == "very-high"
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


def test_sarif_help_uri_points_at_cuda2hips_own_rule_pages(tmp_path):
    """helpUri: the rule's page under the configured base (docs/rules/CODE.md of this
    repository), never another project's docs."""
    project = copy_project(tmp_path)
    for env, expected in (
        ({"CUDA2HIP_RULE_DOCS_URL": "https://example.org/cuda2hip/blob/v1/docs/rules/{code}.md"},
         "https://example.org/cuda2hip/blob/v1/docs/rules/HIP102.md"),
        ({"CUDA2HIP_RULE_DOCS_URL": "https://example.org/rules/"}, "https://example.org/rules/HIP102.md"),
    ):
        r = run_cli("check", "--isolated", "--select", SELECT, "--format", "sarif", ".", cwd=project, env=env)
        rules = {d["id"]: d for d in json.loads(r.stdout)["runs"][0]["tool"]["driver"]["rules"]}
        assert rules["HIP102"]["helpUri"] == expected
        assert all(d["helpUri"].endswith(f"/{code}.md") for code, d in rules.items())
    root = Path(__file__).resolve().parents[1]
    assert all((root / "docs" / "rules" / f"{code}.md").is_file() for code in SELECT.split(","))


def _apply_by_bytes(raw: bytes, changes) -> bytes:
    edits = sorted(((r["deletedRegion"]["byteOffset"], r["deletedRegion"]["byteLength"],
                     r.get("insertedContent", {}).get("text", "")) for r in changes), reverse=True)
    for offset, length, text in edits:
        raw = raw[:offset] + text.encode("utf-8") + raw[offset + length:]
    return raw


def _apply_by_lines(text: str, changes) -> str:
    """Apply replacements by line and column (code points; endColumn is exclusive)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line, col):
        return starts[line - 1] + col - 1

    edits = sorted(((offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                     offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
                     r.get("insertedContent", {}).get("text", "")) for r in changes), reverse=True)
    for start, end, new in edits:
        text = text[:start] + new + text[end:]
    return text


def test_sarif_fixes_replay_to_what_fix_writes(tmp_path):
    """`fixes[]`: each fix's edits as replacements whose byte offsets (into the file as stored:
    after a BOM, one byte per character in an 8-bit file) and lines / code-point columns both
    give, applied, the file `cuda2hip fix` writes."""
    project = copy_project(tmp_path)
    src = project / "src"
    (src / "bom.cu").write_bytes("\ufeff#include <cuda_runtime.h>\r\n/* é ✓ */ cudaStream_t s; cudaEvent_t e;\r\n"
                                 "int n = 0;  // cuda2hip: ignore[HIP101]\r\n".encode("utf-8"))
    (src / "latin1.cu").write_bytes("/* caf\xe9 */ cudaStream_t s;\n#include <cuda_runtime.h>\n".encode("latin-1"))
    sarif = _sarif(project, "--isolated", "src/bom.cu", "src/latin1.cu")
    by_file = {}
    for res in sarif["runs"][0]["results"]:
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for fix in res.get("fixes", []):
            assert fix["properties"]["applicability"] == "safe" and fix["description"]["text"].endswith("(safe fix)")
            (change,) = fix["artifactChanges"]
            assert change["artifactLocation"] == res["locations"][0]["physicalLocation"]["artifactLocation"]
            by_file.setdefault(uri, []).extend(change["replacements"])
    assert sorted(by_file) == ["src/bom.cu", "src/latin1.cu"]
    assert len(by_file["src/bom.cu"]) == 4  # the header, two renames, the unused suppression
    originals = {uri: (project / uri).read_bytes() for uri in by_file}
    r = run_cli("fix", "--isolated", "--select", SELECT, "src/bom.cu", "src/latin1.cu", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    for uri, changes in by_file.items():
        fixed = (project / uri).read_bytes()
        assert fixed != originals[uri]
        assert _apply_by_bytes(originals[uri], changes) == fixed, uri
        encoding = "latin-1" if uri.endswith("latin1.cu") else "utf-8-sig"
        by_lines = _apply_by_lines(originals[uri].decode(encoding), changes)
        assert by_lines == fixed.decode(encoding), uri
    # An insertion is an empty region (startColumn == endColumn, byteLength 0).
    region = {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}
    assert _apply_by_lines("ab\n", [{"deletedRegion": region, "insertedContent": {"text": "x"}}]) == "xab\n"


def test_sarif_with_fixes_and_suppressions_validates(tmp_path):
    project = copy_project(tmp_path)
    sarif = _sarif(project, "--isolated", ".")
    results = sarif["runs"][0]["results"]
    assert any(r.get("fixes") for r in results) and any(r.get("suppressions") for r in results)
    assert not any(r.get("fixes") for r in results if r["ruleId"] == "HIP102")  # no fix, no fixes[]
    errors = sarif_schema_errors(sarif)
    assert not errors, "\n".join(errors[:10])
    problems = sarif_multitool_problems(sarif, tmp_path)
    assert not problems, "\n".join(problems[:10])


def test_sarif_of_every_rule_with_a_help_uri_validates(tmp_path):
    """All rules (their help, tags and fixes), helpUri set: what a CI upload of a real run holds."""
    project = copy_project(tmp_path)
    r = run_cli("check", "--isolated", "--format", "sarif", ".", cwd=project,
                env={"CUDA2HIP_RULE_DOCS_URL": "https://example.org/cuda2hip/docs/rules/{code}.md"})
    assert r.returncode == 1, r.stderr
    sarif = json.loads(r.stdout)
    assert len(sarif["runs"][0]["tool"]["driver"]["rules"]) > len(SELECT.split(","))
    errors = sarif_schema_errors(sarif)
    assert not errors, "\n".join(errors[:10])
    problems = sarif_multitool_problems(sarif, tmp_path)
    assert not problems, "\n".join(problems[:10])


def test_the_validators_reject_what_they_should(tmp_path):
    """The two checks above can fail: a region at line 0 breaks the schema, a result without a
    location GitHub's ingestion rules. A log the Multitool cannot read into its object model (an
    unknown level) it passes over without a word: the schema check catches that one."""
    import copy

    project = copy_project(tmp_path)
    sarif = _sarif(project, "--isolated", ".")
    broken, unreadable = copy.deepcopy(sarif), copy.deepcopy(sarif)
    results = broken["runs"][0]["results"]
    results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del results[1]["locations"]
    assert "0 is less than the minimum of 1" in "\n".join(sarif_schema_errors(broken))
    problems = "\n".join(sarif_multitool_problems(broken, tmp_path))
    assert "JSON1008 (error)" in problems and "GH1015 (error)" in problems, problems
    unreadable["runs"][0]["results"][0]["level"] = "fatal"
    assert "'fatal' is not one of" in "\n".join(sarif_schema_errors(unreadable))
    assert not sarif_multitool_problems(unreadable, tmp_path)
