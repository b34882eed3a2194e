"""Golden-output tests of the Markdown and GitHub formats (check, and the report of a rewrite)."""

from __future__ import annotations

from conftest import run_cli
from report_helpers import SELECT, assert_golden, copy_project


def test_github_annotations_golden(tmp_path):
    project = copy_project(tmp_path)
    r = run_cli("check", "--isolated", "--select", SELECT, "--format", "github", ".", cwd=project)
    assert r.returncode == 1, r.stderr
    assert_golden("check.github.txt", r.stdout)


def test_markdown_golden(tmp_path):
    project = copy_project(tmp_path)
    r = run_cli("check", "--isolated", "--select", SELECT, "--format", "markdown", ".", cwd=project)
    assert r.returncode == 1, r.stderr
    assert_golden("check.md", r.stdout)


def test_markdown_fix_report_golden(tmp_path):
    """`fix --report x.md`: what was fixed, what remains, and the diff of every changed file."""
    project = copy_project(tmp_path)
    r = run_cli("fix", "--isolated", "--select", SELECT, "--report", "fix-report.md", "src", cwd=project)
    assert r.returncode == 1, r.stderr  # HIP102 errors remain
    assert_golden("fix-report.md", (project / "fix-report.md").read_text(encoding="utf-8"))
    assert "hipStreamCreate" in (project / "src" / "kernels.cu").read_text()


def test_github_escapes_properties_and_data(tmp_path):
    """Workflow-command syntax: `%`, CR and LF escaped in data; `:` and `,` in properties too."""
    from cuda2hip.report.github import _data, _prop

    assert _data("50% done\nnext") == "50%25 done%0Anext"
    assert _prop("a:b,c") == "a%3Ab%2Cc"
    project = copy_project(tmp_path)
    odd = project / "src" / "we,ird:name.cu"
    odd.write_text("cudaStream_t s;\n")
    r = run_cli("check", "--isolated", "--select", SELECT, "--format", "github", str(odd.relative_to(project)), cwd=project)
    assert "::warning file=src/we%2Cird%3Aname.cu,line=1,col=1,endLine=1,endColumn=13," in r.stdout
