"""The manual-work estimate (report/effort.py, docs/reports.md): one port per rule and API, then
a per-site cost; info / hint findings, safe fixes and suppressed findings left out; and the
same numbers in the JSON summary, the Markdown comment and the HTML page."""

from __future__ import annotations

import json

from cuda2hip.findings import API, Applicability, Edit, Finding, Fix, Severity
from cuda2hip.report.effort import PORT_MINUTES, SITE_MINUTES, estimate

from conftest import run_cli
from test_report_numbers import html_summary


def _f(code="HIP102", api="cudaFoo", effort="high", severity=Severity.ERROR, fix=None, start=0, path="a.cu",
       suppressed=False):
    return Finding(code=code, rule_id="r", severity=severity, path=path, start=start, end=start + 1, line=1,
                   column=1, end_line=1, end_column=2, message="m", effort=effort, fix=fix, suppressed=suppressed,
                   extra={API: api} if api else {})


def _fix(applicability):
    return Fix(Applicability(applicability), (Edit(0, 1, "x"),))


def test_the_same_api_in_forty_places_is_one_port_and_39_further_sites():
    est = estimate([_f(start=i, path=f"f{i % 7}.cu") for i in range(40)])
    assert est.minutes == PORT_MINUTES["high"] + 39 * SITE_MINUTES["high"] == 120 + 390
    assert (est.ports, est.findings) == (1, 40)


def test_each_distinct_api_and_rule_is_a_port_of_its_own():
    est = estimate([_f(api="cudaFoo"), _f(api="cudaBar", start=5), _f(code="HIP190", api="cudaFoo", effort="medium")])
    assert est.ports == 3 and est.minutes == 120 + 120 + 30
    assert dict(est.minutes_by_rule) == {"HIP102": 240, "HIP190": 30}


def test_findings_about_no_api_are_ported_site_by_site():
    est = estimate([_f(code="HIP401", api=None, effort="medium", severity=Severity.WARNING, start=i) for i in range(3)])
    assert est.ports == 3 and est.minutes == 3 * 30


def test_the_port_costs_its_hardest_finding():
    # e.g. HIP402: a full mask (low, fixed) and a partial mask (medium, by hand) of one function
    est = estimate([_f(effort="low", start=1), _f(effort="medium", start=2), _f(effort="low", start=3)])
    assert est.minutes == PORT_MINUTES["medium"] + 2 * SITE_MINUTES["low"]


def test_info_hint_safe_fixes_and_suppressed_findings_are_left_out():
    est = estimate([
        _f(severity=Severity.INFO, effort="high"),
        _f(severity=Severity.HINT, effort="medium", api="cudaHint"),
        _f(fix=_fix("safe"), api="cudaSafe"),
        _f(suppressed=True, api="cudaQuiet"),
    ])
    assert est.minutes == 0 and est.findings == 0
    assert dict(est.left_out) == {"info/hint": 2, "safe fix": 1}


def test_unsafe_fixes_and_suggestions_still_count():
    est = estimate([_f(fix=_fix("unsafe"), api="cudaA"), _f(fix=_fix("display-only"), api="cudaB")])
    assert est.minutes == 2 * 120


FORTY = "".join(f"void f{i}() {{ cudaDeviceFlushGPUDirectRDMAWrites(a, b); }}\n" for i in range(40))


def test_the_reports_show_the_model_and_agree(tmp_path):
    (tmp_path / "k.cu").write_text(FORTY + "// cudaLater: a comment\nconst char* s = \"cudaMalloc\";\n")
    args = ("check", "--isolated", "--no-cache", "--select", "HIP102,HIP191", ".")
    s = json.loads(run_cli(*args, "--format", "json", cwd=tmp_path).stdout)["summary"]
    mw = s["manual_work"]
    # 40 calls of one API without a HIP equivalent: one 2 h port, then 10 min a site; the info
    # finding (HIP191, a CUDA name in a string) is left out
    assert (mw["minutes"], mw["ports"], mw["findings"]) == (120 + 39 * 10, 1, 40)
    assert mw["left_out"] == {"info_or_hint": 1, "safe_fix": 0}
    md = run_cli(*args, "--format", "markdown", cwd=tmp_path).stdout
    assert "| Manual work left (estimate) | 8 h 30 min (1 port, 40 findings) |" in md
    assert "each further place the same rule reports the same API adds" in md
    page = run_cli(*args, "--format", "html", cwd=tmp_path).stdout
    cells = html_summary(page)
    assert cells["manual_work.minutes"] == str(mw["minutes"]) and cells["manual_work.ports"] == "1"
    assert "Each further site" in page


def _html(tmp_path, findings) -> str:
    """The HTML page of a run whose one file has `findings` (made up: what a rule's findings
    may be, not what a source gives)."""
    from cuda2hip.engine.engine import Engine
    from cuda2hip.report import ReportContext, render
    from cuda2hip.results import FileResult, Mode, RunResult
    from cuda2hip.settings import Settings

    (tmp_path / "a.cu").write_text("int x;\n" * 3)
    settings = Settings(root=tmp_path, select=("HIP133",))
    result = FileResult(path=str(tmp_path / "a.cu"), language="cuda", findings=findings)
    return render("html", RunResult([result], [], Mode.CHECK), ReportContext(engine=Engine(settings), settings=settings))


def test_html_by_rule_table_shows_the_severities_findings_have(tmp_path):
    """HIP133 is declared `error` but reports some functions as warnings: the table says what
    its findings are."""
    both = [_f(code="HIP133", api="__ldcs", effort="medium", path=str(tmp_path / "a.cu")),
            _f(code="HIP133", api="__fns", effort="medium", severity=Severity.WARNING, start=3, path=str(tmp_path / "a.cu"))]
    page = _html(tmp_path, both)
    row = page[page.index('data-filter-rule="HIP133"'):]
    row = row[:row.index("</tr>")]
    assert '<span class="sev sev-error">error 1</span> <span class="sev sev-warning">warning 1</span>' in row, row
    page = _html(tmp_path, both[1:])
    row = page[page.index('data-filter-rule="HIP133"'):]
    assert '<span class="sev sev-warning">warning</span></td>' in row[:row.index("</tr>")]