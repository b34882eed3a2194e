"""The HTML report in a real browser: Debian's chromium, headless, driven by Playwright (which
cannot download a browser of its own here). The page must show the JSON output's numbers,
filter its findings, link findings to rule docs, sort tables, and fetch nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import not_installed, run_cli
from report_helpers import SELECT, copy_project

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install -e '.[dev]')")
    exe = shutil.which(str(CHROMIUM)) or shutil.which("chromium")
    if exe is None:
        pytest.skip(not_installed("chromium", "chromium"))
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(exe), args=LAUNCH_ARGS)
        yield b
        b.close()


def _open(browser, path: Path):
    """A page with every request and console error recorded."""
    page = browser.new_page()
    requests, problems = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    return page, requests, problems


def _visible_findings(page) -> int:
    return page.locator("li.finding:visible").count()


def test_html_report_in_chromium(browser, tmp_path):
    project = copy_project(tmp_path)
    args = ("check", "--isolated", "--select", SELECT, ".")
    r = run_cli(*args, "--format", "json", cwd=project)
    summary = json.loads(r.stdout)["summary"]
    r = run_cli(*args, "--format", "html", "--output", "report.html", cwd=project)
    assert r.returncode == 1, r.stderr
    report = project / "report.html"
    page, requests, problems = _open(browser, report)

    # Summary numbers as rendered == the JSON output's.
    def shown(key):
        el = page.locator(f'[data-summary="{key}"]')
        return el.get_attribute("data-value") or el.inner_text().strip()

    for key in ("files_scanned", "files_with_findings", "findings", "failing", "suppressed"):
        assert shown(key) == str(summary[key]), key
    for sev, n in summary["by_severity"].items():
        assert shown(f"by_severity.{sev}") == str(n)
    for code, n in summary["by_rule"].items():
        assert shown(f"by_rule.{code}") == str(n)
    assert shown("manual_work.minutes") == str(summary["manual_work"]["minutes"])
    assert page.locator("#estimate").inner_text().count("120")  # the estimate is explained

    # All active findings listed; the suppressed one hidden until asked for.
    assert _visible_findings(page) == summary["findings"] == 14
    assert page.locator("#visible-count").inner_text() == "14"
    page.check("#filter-suppressed")
    assert _visible_findings(page) == 15

    # Filters change the visible list.
    page.click("#filter-reset")
    page.select_option("#filter-rule", "HIP102")
    assert _visible_findings(page) == summary["by_rule"]["HIP102"] == 3
    assert page.locator("#visible-count").inner_text() == "3"
    assert page.locator("section.file:visible").count() == 1  # util.cuh has no HIP102
    page.click("#filter-reset")
    page.uncheck('input[name="severity"][value="warning"]')
    assert _visible_findings(page) == summary["by_severity"]["error"]
    page.click("#filter-reset")
    page.select_option("#filter-file", "src/util.cuh")
    assert _visible_findings(page) == 3
    page.click("#filter-reset")
    page.fill("#filter-text", "cudaMalloc")
    assert _visible_findings(page) == 1
    page.click("#filter-reset")
    # The rule table filters too.
    page.click('#rules-table button[data-filter-rule="HIP100"]')
    assert _visible_findings(page) == 1

    # A finding's code links to its rule's embedded docs, which open.
    page.click("#filter-reset")
    doc = page.locator("#rule-HIP102")
    assert not doc.locator(".doc-body").is_visible()
    page.locator('li.finding[data-rule="HIP102"] a.code').first.click()
    assert doc.locator(".doc-body").is_visible()
    assert "## " not in doc.inner_text() and "What it does" in doc.inner_text()

    # Sortable tables: Findings column, descending first, then ascending.
    table = page.locator("#rules-table")
    header = table.locator("thead th", has_text="Findings")
    header.click()
    codes = table.locator("tbody tr td:first-child").all_inner_texts()
    assert codes[0] == "HIP101"  # 9 findings
    header.click()
    assert table.locator("tbody tr td:first-child").all_inner_texts()[-1] == "HIP101"

    # The page fetched nothing but itself, and nothing failed (a CSP violation would show here).
    assert requests == [report.resolve().as_uri()]
    assert problems == []
    page.close()


def test_fix_report_in_chromium_shows_the_diff(browser, tmp_path):
    from playwright.sync_api import expect  # retries until the page shows it

    project = copy_project(tmp_path)
    r = run_cli("fix", "--isolated", "--select", SELECT, "--report", "fix.html", "src", cwd=project)
    assert r.returncode == 1, r.stderr
    page, requests, problems = _open(browser, project / "fix.html")
    assert page.locator('[data-summary="fixed"]').inner_text() == "11"
    util = page.locator('section.file[data-file="src/util.cuh"]')
    # Sections off screen are rendered when scrolled to (content-visibility): expect() waits.
    util.scroll_into_view_if_needed()
    # util.cuh has no findings left: its diff is open, its applied fixes listed.
    expect(util.locator("details.diff[open] .d-add").first).to_be_visible()
    expect(util.locator(".applied")).to_contain_text("HIP101 × 3")
    kernels = page.locator('section.file[data-file="src/kernels.cu"]')
    kernels.scroll_into_view_if_needed()
    kernels.locator("details.diff summary").click()
    expect(kernels.locator("details.diff")).to_contain_text("+#include <hip/hip_runtime.h>")
    # Filtering by rule hides files that have only a rewrite and no matching finding.
    page.select_option("#filter-rule", "HIP102")
    assert not util.is_visible() and kernels.is_visible()
    assert requests == [(project / "fix.html").resolve().as_uri()]
    assert problems == []
    page.close()


def _visible_count(page) -> int:
    return int(page.locator("#visible-count").inner_text())


def test_work_folder_filters_and_readiness_in_chromium(browser, tmp_path):
    """The filters a reviewer needs (needs a person / fixable, folder), the readiness view, and
    the "By effort" table whole on a laptop-sized window."""
    project = copy_project(tmp_path)
    lib = project / "lib" / "deep"
    lib.mkdir(parents=True)
    (lib / "ready.cu").write_text("__global__ void k() {}\n")
    (lib / "fixable.cu").write_text("cudaStream_t s;\n")
    args = ("check", "--isolated", "--select", SELECT, ".")
    data = json.loads(run_cli(*args, "--format", "json", cwd=project).stdout)
    findings = [f for f in data["findings"] if not f["suppressed"]]
    manual = [f for f in findings if f["severity"] in ("warning", "error")
              and (f["fix"] is None or f["fix"]["applicability"] != "safe")]
    safe = [f for f in findings if f["fix"] and f["fix"]["applicability"] == "safe"]
    assert run_cli(*args, "--format", "html", "-o", "r.html", cwd=project).returncode == 1
    page, requests, problems = _open(browser, project / "r.html")
    total = len(findings)
    assert _visible_count(page) == _visible_findings(page) == total

    page.select_option("#filter-work", "manual")
    assert _visible_count(page) == _visible_findings(page) == len(manual) == 3
    assert page.locator("li.finding .badge.person").count() == 3
    page.select_option("#filter-work", "fix")
    assert _visible_count(page) == _visible_findings(page) == len(safe)
    page.click("#filter-reset")

    page.select_option("#filter-folder", "lib")
    assert _visible_count(page) == _visible_findings(page) == 1
    assert page.locator("section.file:visible").all_inner_texts()[0].startswith("lib/deep/fixable.cu")
    page.click("#filter-reset")
    assert _visible_count(page) == total

    # Readiness: 5 files; ready: clean.cu, lib/deep/ready.cu; fixable: lib/deep/fixable.cu, util.cuh
    # (only safe fixes); a person: kernels.cu (HIP102).
    rows = page.locator("#readiness-table tbody tr")
    root = rows.first
    assert (root.get_attribute("data-files"), root.get_attribute("data-ready"), root.get_attribute("data-fixable"),
            root.get_attribute("data-manual")) == ("5", "2", "2", "1")
    assert page.locator("[data-summary='readiness.ready']").inner_text() == "2"
    lib_row = page.locator('#readiness-table tr[data-folder="lib/deep"]')  # lib/ alone holds deep/: one row
    assert lib_row.get_attribute("data-ready") == "1" and lib_row.get_attribute("data-fixable") == "1"
    assert page.locator('#readiness-table tr[data-folder="lib"]').count() == 0
    widths = lib_row.locator(".bar i").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    bar = lib_row.locator(".bar").evaluate("e => e.getBoundingClientRect().width")
    assert len(widths) == 2 and abs(widths[0] - widths[1]) < 1 and abs(sum(widths) - bar) < 1
    lib_row.locator("button").click()  # a folder's name filters the findings
    assert page.locator("#filter-folder").input_value() == "lib/deep" and _visible_count(page) == 1

    # "By effort" is whole, not clipped, at 1280 and at 800 pixels.
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        clipped = page.locator("#estimate").evaluate("e => e.scrollWidth > e.clientWidth + 1")
        assert not clipped, width
    assert requests == [(project / "r.html").resolve().as_uri()]
    assert problems == []
    page.close()


def test_marks_and_text_in_chromium(browser, tmp_path):
    """The flagged range is marked at its code points after non-ASCII and astral characters and
    with CRLF line ends; code is text, never HTML; invisible bidi controls are shown."""
    project = copy_project(tmp_path)
    (project / "src" / "odd.cu").write_bytes(
        "int a;\r\n/* é 😀 <b>x</b> */ cudaStream_t s;\r\n/* \u202e */ cudaEvent_t e;\r\n".encode("utf-8"))
    assert run_cli("check", "--isolated", "--select", SELECT, "--format", "html", "-o", "r.html", "src/odd.cu",
                   cwd=project).returncode == 1
    page, requests, problems = _open(browser, project / "r.html")
    marks = page.locator("li.finding table.code-frame tr.marked mark").all_inner_texts()
    assert marks == ["cudaStream_t", "cudaEvent_t"]
    assert page.locator("li.finding table.code-frame b").count() == 0  # <b> shown as text
    assert "<b>x</b>" in page.locator("li.finding").first.inner_text()
    assert "<U+202E>" in page.locator("li.finding").nth(1).locator("table.code-frame").inner_text()
    assert problems == []
    page.close()


def test_a_big_report_is_drawn_page_by_page(browser, tmp_path):
    """Thousands of findings: the page draws 300 at a time; "Show more" draws the next ones, and
    a filter counts every finding, drawn or not."""
    src = tmp_path / "src"
    src.mkdir()
    for n in range(20):
        (src / f"k{n:02}.cu").write_text("".join(f"void f{i}() {{ cudaStream_t s; cudaFree(p); }}\n" for i in range(25)))
    r = run_cli("check", "--isolated", "--no-cache", "--select", "HIP101", "--format", "html", "-o", "r.html", "src",
                cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    size = (tmp_path / "r.html").stat().st_size
    assert size / 1000 < 600, size  # bytes per finding (1000 findings)
    page, requests, problems = _open(browser, tmp_path / "r.html")
    assert _visible_count(page) == 1000 and _visible_findings(page) == 300
    page.click("#show-more")
    assert _visible_findings(page) == 600
    page.fill("#filter-text", "cudaFree")
    assert _visible_count(page) == 500 and _visible_findings(page) == 300
    page.goto((tmp_path / "r.html").resolve().as_uri() + "#finding-900")  # a link to a finding not drawn
    page.wait_for_selector("#finding-900")
    assert page.locator("#finding-900").is_visible()
    assert problems == []
    page.close()
