"""`--format gitlab` (GitLab Code Quality) and `--format junit` (JUnit XML): each finding where
those CI systems look for it, paths relative to the project root, well-formed whatever the code
and file names hold."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from conftest import run_cli
from report_helpers import SELECT, copy_project

GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def _check(project, fmt, *args, cwd=None):
    return run_cli("check", "--isolated", "--select", SELECT, "--format", fmt, *args, cwd=cwd or project)


def test_gitlab_code_quality_report(tmp_path):
    project = copy_project(tmp_path)
    r = _check(project, "gitlab", ".")
    assert r.returncode == 1, r.stderr
    issues = json.loads(r.stdout)
    data = json.loads(_check(project, "json", ".").stdout)
    active = [f for f in data["findings"] if not f["suppressed"]]
    assert len(issues) == len(active) == 14
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= issue.keys()
        assert issue["severity"] in GITLAB_SEVERITIES
        assert isinstance(issue["location"]["lines"]["begin"], int)
        assert (project / issue["location"]["path"]).is_file()
        assert issue["description"].startswith(issue["check_name"] + " ")
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # GitLab keeps one issue per fingerprint
    by_code = {}
    for i in issues:
        by_code.setdefault(i["check_name"], set()).add(i["severity"])
    assert by_code["HIP102"] == {"critical"} and by_code["HIP101"] == {"major"}
    first = next(f for f in active if f["code"] == "HIP102")
    assert any(i["location"] == {"path": first["path"], "lines": {"begin": first["line"], "end": first["end_line"]}}
               for i in issues if i["check_name"] == "HIP102")
    # The same finding keeps its fingerprint when lines above it move.
    kernels = project / "src" / "kernels.cu"
    kernels.write_text("\n\n" + kernels.read_text())
    moved = json.loads(_check(project, "gitlab", ".").stdout)
    assert {i["fingerprint"] for i in moved} == {i["fingerprint"] for i in issues}


def test_gitlab_paths_are_relative_to_the_project_root_and_errors_are_blockers(tmp_path):
    project = copy_project(tmp_path)
    (project / "cuda2hip.toml").write_text(f"select = {json.dumps(SELECT.split(','))}\n")
    (project / "src" / "bad.cu").write_bytes("int café;\n".encode("utf-16"))
    r = run_cli("check", "--format", "gitlab", ".", cwd=project / "src")
    assert r.returncode == 2
    issues = json.loads(r.stdout)
    assert {i["location"]["path"] for i in issues} == {"src/kernels.cu", "src/util.cuh", "src/bad.cu"}
    (error,) = [i for i in issues if i["check_name"] == "file-error"]
    assert error["severity"] == "blocker" and error["location"] == {"path": "src/bad.cu", "lines": {"begin": 1}}


def _junit(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))  # well-formed, or this raises
    assert root.tag == "testsuites" and [s.tag for s in root] == ["testsuite"]
    suite = root[0]
    cases = suite.findall("testcase")
    # the test cases, after the suite's properties (the target release)
    assert [c.tag for c in suite][:1] == ["properties"] and all(c.tag == "testcase" for c in suite[1:])
    assert [(p.get("name"), p.get("value")) for p in suite[0]] == [("target-rocm", "7.2")]
    for attr, tag in (("failures", "failure"), ("errors", "error")):
        assert int(suite.get(attr)) == int(root.get(attr)) == sum(1 for c in cases if c.find(tag) is not None)
    assert int(suite.get("tests")) == int(root.get("tests")) == len(cases)
    return suite


def test_junit_one_case_per_rule_in_each_file(tmp_path):
    project = copy_project(tmp_path)
    r = _check(project, "junit", ".")
    assert r.returncode == 1, r.stderr
    suite = _junit(r.stdout)
    cases = {(c.get("classname"), c.get("name")): c for c in suite.findall("testcase")}
    assert sorted(cases) == [
        ("src/clean.cu", "no findings"),
        ("src/kernels.cu", "HIP001 unused-suppression"), ("src/kernels.cu", "HIP100 cuda-runtime-headers"),
        ("src/kernels.cu", "HIP101 cuda-runtime-api"), ("src/kernels.cu", "HIP102 cuda-api-without-hip-equivalent"),
        ("src/util.cuh", "HIP101 cuda-runtime-api"),
    ]
    assert cases[("src/clean.cu", "no findings")].find("failure") is None
    failure = cases[("src/kernels.cu", "HIP102 cuda-api-without-hip-equivalent")].find("failure")
    assert failure.get("type") == "HIP102" and failure.get("message") == "3 findings of HIP102 cuda-api-without-hip-equivalent"
    assert len(failure.text.splitlines()) == 3 and failure.text.startswith("src/kernels.cu:16:5: [error] ")
    # Below --fail-on a case passes, its findings kept in system-out.
    suite = _junit(_check(project, "junit", "--fail-on", "error", ".").stdout)
    passed = [c for c in suite.findall("testcase") if c.get("classname") == "src/util.cuh"][0]
    assert passed.find("failure") is None and "[warning]" in passed.find("system-out").text
    assert suite.get("failures") == "1"


def test_junit_is_well_formed_whatever_the_input_holds(tmp_path):
    project = copy_project(tmp_path)
    odd = project / "src" / "we<i>rd & \"odd\".cu"
    odd.write_bytes(b"/* \x01\x1b[31m ]]> */ cudaStream_t s; // </failure>\n")
    (project / "src" / "esc\x1b[31mape.cu").write_text("cudaEvent_t e;\n")  # not allowed in XML 1.0, even escaped
    (project / "src" / "bad.cu").write_bytes("x".encode("utf-16"))
    r = _check(project, "junit", "src")
    assert r.returncode == 2
    suite = _junit(r.stdout)
    names = {c.get("classname") for c in suite.findall("testcase")}
    assert 'src/we<i>rd & "odd".cu' in names and "src/esc\\x1b[31mape.cu" in names
    errors = [c for c in suite.findall("testcase") if c.find("error") is not None]
    assert [c.get("classname") for c in errors] == ["src/bad.cu"]
