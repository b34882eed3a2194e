"""Every format tells the same numbers (report/summary.py), `--statistics` counts per rule,
`fix --report` writes the rewrite with its diffs, and the HTML page is self-contained."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from conftest import run_cli
from report_helpers import SELECT, copy_project, html_page_data, sarif_schema_errors


def _run(project, *args, expect=1):
    r = run_cli(*args, cwd=project)
    assert r.returncode == expect, r.stdout + r.stderr
    return r.stdout


class _SummaryCells(HTMLParser):
    """Text of the elements marked `data-summary` (their `data-value` when given)."""

    def __init__(self):
        super().__init__()
        self.values: dict[str, str] = {}
        self._open: list[tuple[str, str, bool]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-summary" in a:
            if "data-value" in a:
                self.values[a["data-summary"]] = a["data-value"]
            else:
                self._open.append((a["data-summary"], tag, True))
                self.values[a["data-summary"]] = ""

    def handle_data(self, data):
        if self._open:
            self.values[self._open[-1][0]] += data

    def handle_endtag(self, tag):
        if self._open and self._open[-1][1] == tag:
            self._open.pop()


def html_summary(text: str) -> dict[str, str]:
    p = _SummaryCells()
    p.feed(text)
    return {k: v.strip() for k, v in p.values.items()}


def test_all_formats_report_the_same_numbers(tmp_path):
    project = copy_project(tmp_path)
    base = ("check", "--isolated", "--select", SELECT, ".")
    s = json.loads(_run(project, *base, "--format", "json"))["summary"]
    assert s["findings"] == 14 and s["suppressed"] == 1 and s["by_severity"]["error"] == 3
    mw = s["manual_work"]
    # three distinct APIs without a HIP equivalent (HIP102, high: 2 h each); the 11 safe fixes
    # are the tool's work
    assert {k: mw[k] for k in ("minutes", "findings", "ports", "by_effort", "left_out", "minutes_by_rule")} == {
        "minutes": 360, "findings": 3, "ports": 3, "by_effort": {"none": 0, "low": 0, "medium": 0, "high": 3},
        "left_out": {"info_or_hint": 0, "safe_fix": 11}, "minutes_by_rule": {"HIP102": 360}}
    assert mw["minutes_per_effort"] == {"none": 0, "low": 5, "medium": 30, "high": 120}
    assert mw["minutes_per_further_site"] == {"none": 0, "low": 1, "medium": 5, "high": 10}

    sarif = json.loads(_run(project, *base, "--format", "sarif"))["runs"][0]
    active = [r for r in sarif["results"] if not r.get("suppressions")]
    assert len(active) == s["findings"]
    assert sum(1 for r in active if r["level"] == "error") == s["by_severity"]["error"]

    github = _run(project, *base, "--format", "github").splitlines()
    assert sum(1 for line in github if line.startswith("::")) == s["findings"]
    assert sum(1 for line in github if line.startswith("::error ")) == s["by_severity"]["error"]

    text = _run(project, *base).splitlines()[-1]
    assert text.startswith(f"{s['findings']} findings found ({s['by_severity']['error']} error, "
                           f"{s['by_severity']['warning']} warning) in {s['files_with_findings']} of {s['files_scanned']} files.")

    md = _run(project, *base, "--format", "markdown")
    for label, key in (("Files scanned", "files_scanned"), ("Findings", "findings"), ("Suppressed", "suppressed")):
        assert f"| {label} | {s[key]} |" in md
    for code, n in s["by_rule"].items():
        assert re.search(rf"\| `{code}` [a-z-]+ \| {n} \|", md)

    stats = json.loads(_run(project, *base, "--statistics", "--format", "json"))
    assert {r["code"]: r["count"] for r in stats} == s["by_rule"]

    page = html_summary(_run(project, *base, "--format", "html"))
    for key in ("files_scanned", "files_with_findings", "findings", "failing", "suppressed"):
        assert page[key] == str(s[key]), key
    for sev, n in s["by_severity"].items():
        assert page[f"by_severity.{sev}"] == str(n)
    for code, n in s["by_rule"].items():
        assert page[f"by_rule.{code}"] == str(n)
    assert page["manual_work.minutes"] == str(s["manual_work"]["minutes"])


def test_statistics_text(tmp_path):
    project = copy_project(tmp_path)
    out = _run(project, "check", "--isolated", "--select", SELECT, "--statistics", ".")
    assert out.splitlines() == [
        " 9  HIP101  [*]  cuda-runtime-api                 CUDA runtime API names (functions, types, enum constants, macros) with a HIP equivalent",
        " 3  HIP102       cuda-api-without-hip-equivalent  CUDA API names that have no HIP equivalent (or none in the targeted ROCm version)",
        " 1  HIP001  [*]  unused-suppression               A `cuda2hip: ignore[...]` comment that suppresses nothing",
        " 1  HIP100  [*]  cuda-runtime-headers             CUDA runtime headers and their HIP counterparts",
        "14  total at target ROCm 7.2; [*] all fixable with `cuda2hip fix`, [-] some",
    ]
    # With --output the report goes to the file and the statistics to the terminal.
    out = _run(project, "check", "--isolated", "--select", SELECT, "--statistics", "-o", "r.sarif",
               "--format", "sarif", ".")
    assert out.splitlines()[-1].startswith("14  total")
    assert json.loads((project / "r.sarif").read_text())["version"] == "2.1.0"


def test_fix_report_html_and_json_hold_the_diffs(tmp_path):
    project = copy_project(tmp_path)
    _run(project, "fix", "--isolated", "--select", SELECT, "--report", "report.html", "src")
    page = (project / "report.html").read_text()
    data = html_page_data(page)
    diff = data["diffs"][str(data["files"].index("src/kernels.cu"))]
    assert "\n+    hipStream_t stream;\n" in diff and "\n-    cudaStream_t stream;\n" in diff
    summary = html_summary(page)
    assert summary["files_changed"] == "2" and summary["fixed"] == "11" and summary["findings"] == "3"

    project = copy_project(tmp_path / "again")
    _run(project, "fix", "--isolated", "--select", SELECT, "--diff", "--report", "report.json", "src")
    data = json.loads((project / "report.json").read_text())
    assert [c["path"] for c in data["changes"]] == ["src/kernels.cu", "src/util.cuh"]
    assert "+#include <hip/hip_runtime.h>\n" in data["changes"][0]["diff"]
    assert "cudaStream_t" in (project / "src" / "kernels.cu").read_text()  # --diff writes nothing


def test_fix_report_needs_a_known_suffix(tmp_path):
    project = copy_project(tmp_path)
    r = run_cli("fix", "--isolated", "--report", "report.txt", "src", cwd=project)
    assert r.returncode == 2
    assert "--report: cannot tell the format of 'report.txt'" in r.stderr
    assert "cudaStream_t" in (project / "src" / "kernels.cu").read_text()  # nothing was done


def test_html_page_is_self_contained(tmp_path):
    project = copy_project(tmp_path)
    page = _run(project, "check", "--isolated", "--select", SELECT, "--format", "html", ".")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # No reference to anything outside the page: no src= / stylesheet links / url() / @import.
    assert not re.search(r"""\s(src|srcset)\s*=|<link\b|@import|url\(\s*['"]?(https?:|//)""", page, re.I)
    assert 'id="rule-HIP102"' in page and ["HIP102", "cuda-api-without-hip-equivalent"] in html_page_data(page)["rules"]


def test_html_data_cannot_end_its_script_element(tmp_path):
    """Code and messages travel as JSON inside <script>: a `</script>` or `<!--` in them is
    escaped, so the page parses the same whatever the checked code holds."""
    project = copy_project(tmp_path)
    (project / "src" / "odd.cu").write_text('// </script><script>alert(1)</script> <!--\ncudaStream_t s;  // </script>\n')
    page = _run(project, "check", "--isolated", "--select", SELECT, "--format", "html", "src/odd.cu")
    data_part = page[page.index('id="report-data">'):page.index("</script>", page.index('id="report-data">'))]
    assert "<" not in data_part.split(">", 1)[1]
    data = html_page_data(page)
    lines = data["lines"][str(data["files"].index("src/odd.cu"))]
    assert lines[0][1][0] == "// </script><script>alert(1)</script> <!--"


USER_RULES = {
    "printf.yaml": """\
code: USR501
id: device-printf
kind: pattern
severity: info
effort: medium
summary: printf in a kernel
message: "`printf` in device code: check the output buffer size on AMD"
rule:
  pattern: printf($$$A)
fix:
  applicability: unsafe
  template: "(void)0"
docs:
  what: Flags printf calls.
  why: Team rule.
  references: ["team style guide"]
""",
    "sync.yaml": """\
code: USR502
id: device-sync-hint
kind: pattern
severity: hint
effort: high
summary: a global synchronisation
message: "`$F` waits for the whole device"
rule:
  any: [{pattern: cudaDeviceSynchronize()}, {pattern: hipDeviceSynchronize()}]
  has: {kind: identifier, regex: "Synchronize$", stopBy: end}
fix:
  applicability: display-only
  template: "/* $F */"
docs:
  what: Flags device-wide synchronisation.
  why: Team rule.
  references: ["team style guide"]
""",
}


def test_formats_handle_rules_of_any_kind_severity_and_effort(tmp_path):
    """Rules the formats have never heard of (user rules: info / hint, medium / high effort,
    unsafe and display-only fixes, no URL in the references) are counted alike everywhere."""
    project = copy_project(tmp_path)
    for name, text in USER_RULES.items():
        (project / "team_rules").mkdir(exist_ok=True)
        (project / "team_rules" / name).write_text(text)
    (project / "cuda2hip.toml").write_text('rule-dirs = ["team_rules"]\nextend-select = ["USR"]\n')
    (project / "src" / "more.cu").write_text(
        '__global__ void k() { printf("x"); }\nvoid h() { cudaDeviceSynchronize(); printf("y"); }\n')
    s = json.loads(_run(project, "check", "--format", "json", "src"))["summary"]
    assert s["by_rule"]["USR501"] == 2 and s["by_rule"]["USR502"] == 1
    assert s["by_severity"]["info"] == 2 and s["by_severity"]["hint"] == 1
    # The info and hint findings of the user rules are left out, whatever their effort and fix;
    # HIP102's three highs (three distinct APIs) remain.
    assert s["manual_work"]["minutes"] == 3 * 120
    assert s["manual_work"]["left_out"]["info_or_hint"] == 3
    sarif_log = json.loads(_run(project, "check", "--format", "sarif", "src"))
    sarif = sarif_log["runs"][0]
    levels = [r["level"] for r in sarif["results"] if r["ruleId"].startswith("USR")]
    assert sorted(levels) == ["note", "note", "note"]
    usr = next(r for r in sarif["tool"]["driver"]["rules"] if r["id"] == "USR501")
    assert "helpUri" not in usr and usr["defaultConfiguration"]["level"] == "note"
    assert sarif["properties"]["summary"] == s
    assert not sarif_schema_errors(sarif_log)
    # Quiet by default: info and hint findings are counted in one line, listed on request.
    github = _run(project, "check", "--format", "github", "src")
    assert github.count("::notice ") == 0 and "2 info and 1 hint findings not shown" in github
    github = _run(project, "check", "--format", "github", "--show-info", "src")
    assert github.count("::notice ") == 3 and "not shown" not in github
    md = _run(project, "check", "--format", "markdown", "src")
    assert "| `USR501` device-printf | 2 | info | medium | none |" in md
    page = html_summary(_run(project, "check", "--format", "html", "src"))
    assert page["by_rule.USR501"] == "2" and page["by_severity.hint"] == "1"
    assert page["manual_work.minutes"] == str(s["manual_work"]["minutes"])
    stats = json.loads(_run(project, "check", "--statistics", "--format", "json", "src"))
    assert {r["code"]: r["count"] for r in stats} == s["by_rule"]
