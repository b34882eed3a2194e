"""`--format junit`: JUnit XML, which CI systems (GitLab, Jenkins, Azure Pipelines, ...) show as
test results.

One test case per rule in each file that has findings (`classname` the file, `name` the rule's
code and id), failed when one of its findings is at or above --fail-on (then the exit status is
1 too), passed otherwise (its findings in `system-out`); one passed test case per file without
findings; a file that could not be processed is a test case with an `error`. Each failure
lists its findings, one line each: `line:col: [severity] message`. Like the other line formats it
lists the findings at or above --min-severity; suppressed findings are left out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from ..findings import Severity
from .sources import repo_path
from .summary import shown

# Characters XML 1.0 cannot hold, even escaped: written as \xNN so that the file stays well-formed.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _case(suite, classname: str, name: str, path: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=_xml_text(classname), name=_xml_text(name),
                         file=_xml_text(path), time="0")


def render(run, ctx) -> str:
    root = Path(ctx.settings.root)
    threshold = Severity.parse(ctx.settings.fail_on)
    by_file: dict[str, dict[tuple[str, str], list]] = defaultdict(lambda: defaultdict(list))
    for f in sorted((f for f in shown(run.findings, ctx) if not f.suppressed), key=lambda f: f.sort_key):
        by_file[f.path][(f.code, f.rule_id)].append(f)
    suite = ET.Element("testsuite", name="cuda2hip")
    # (JUnit's <properties> come before the test cases)
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="target-rocm", value=ctx.settings.target_rocm)
    tests = failures = errors = 0
    error_paths = {e.path for e in run.errors}
    scanned = sorted({r.path for r in run.files if r.error is None} | set(by_file), key=lambda p: repo_path(p, root))
    for path in scanned:
        rel = repo_path(path, root)
        rules = by_file.get(path)
        if not rules:
            if path not in error_paths:
                _case(suite, rel, "no findings", rel)
                tests += 1
            continue
        for (code, rule_id), found in sorted(rules.items()):
            case = _case(suite, rel, f"{code} {rule_id}", rel)
            tests += 1
            body = "\n".join(f"{rel}:{f.line}:{f.column}: [{f.severity.label}] {f.message}" for f in found)
            worst = max(f.severity for f in found)
            if worst >= threshold:
                failures += 1
                n = len(found)
                failure = ET.SubElement(case, "failure", type=code,
                                        message=_xml_text(f"{n} finding{'s' if n != 1 else ''} of {code} {rule_id}"))
                failure.text = _xml_text(body)
            else:
                ET.SubElement(case, "system-out").text = _xml_text(body)
    for e in run.errors:
        rel = repo_path(e.path, root)
        case = _case(suite, rel, "processing", rel)
        tests += 1
        errors += 1
        ET.SubElement(case, "error", type="file-error", message=_xml_text(e.reason))
    suite.attrib.update(tests=str(tests), failures=str(failures), errors=str(errors), skipped="0")
    top = ET.Element("testsuites", name="cuda2hip", tests=str(tests), failures=str(failures), errors=str(errors))
    top.append(suite)
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"
