"""Docs, rules and messages cite primary sources (ROCm / HIP / LLVM / CUDA documentation and
headers), never a path outside the repository that users do not have (`shared/...`, the notes
the project was written from); code (tests, tools, bench, CI) never reads from such a path either,
it fetches what it needs itself; and every hipcc command the README shows says HIP_PLATFORM=amd
(hipcc picks NVIDIA's platform where nvcc is installed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

OUTSIDE = re.compile(r"(?<![\w.])(?:\.\./)*shared/|DOMAIN-FACTS|DESIGN-NOTES")
CITING = sorted(
    [p for p in (ROOT / "rules").rglob("*") if p.suffix in (".yaml", ".json")]
    + list((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    + list((ROOT / "cuda2hip").rglob("*.py")) + list((ROOT / "cuda2hip").rglob("*.j2"))
    + [ROOT / "tools" / "generate_rule_data.py", ROOT / "tools" / "generate_rule_docs.py"])


# In code: `../shared`, `ROOT.parent / "shared"`, the reference folders and toolchains of the
# machine the project was written on.
CODE_OUTSIDE = re.compile(r"""(?:\.\./)+shared\b|/work/(?:shared|toolchains)\b|shared-ref\b"""
                          r"""|(?:/|,)\s*["']shared["']|DOMAIN-FACTS|DESIGN-NOTES""")
CODE = sorted(p for folder in ("tests", "tools", "bench", "cuda2hip") for p in (ROOT / folder).rglob("*")
              if p.suffix in (".py", ".sh", ".yaml", ".toml", ".txt") and p.is_file()
              and p != Path(__file__).resolve()) + [ROOT / ".ci" / "run", ROOT / "pyproject.toml"]


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_reads_paths_outside_the_repository(path):
    bad = [f"{i}: {line.strip()[:120]}" for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if CODE_OUTSIDE.search(line)]
    assert not bad, (f"{path.relative_to(ROOT)} reads a path users and CI do not have; fetch what it needs "
                     "(tests/harness/) instead:\n" + "\n".join(bad))


@pytest.mark.parametrize("path", CITING, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_citation_of_paths_outside_the_repository(path):
    bad = [f"{i}: {line.strip()[:120]}" for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if OUTSIDE.search(line)]
    assert not bad, f"{path.relative_to(ROOT)} cites a path users do not have; cite the primary source:\n" + "\n".join(bad)


def test_the_check_catches_what_it_should():
    assert OUTSIDE.search("- ROCm 10.1 release notes, summarised in shared/DOMAIN-FACTS.md")
    assert OUTSIDE.search("input: `../shared/reference/hipify-api-tables`")
    assert not OUTSIDE.search("__shared__ float tile[32]; lib/libshared.so")
    for code in ('DEFAULT_TABLES = ROOT.parent / "shared" / "reference"', "open('../shared/x.json')",
                 'Path("..", "shared")', "hipcc=/work/toolchains/shared-ref/rocm-7.2/bin/hipcc"):
        assert CODE_OUTSIDE.search(code), code
    for code in ('"shared_with": {}', "__shared__ float tile[32];", "add_library(x SHARED y.cpp)"):
        assert not CODE_OUTSIDE.search(code), code


def _code_lines(markdown: str):
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            yield line


def test_readme_hipcc_commands_name_the_amd_platform():
    commands = [line for line in _code_lines((ROOT / "README.md").read_text(encoding="utf-8"))
                if re.search(r"(^|\s|&&\s*)hipcc\s", line)]
    assert commands, "the README shows how to build the migrated code with hipcc"
    assert all("HIP_PLATFORM=amd" in line for line in commands), commands


def test_every_promise_of_security_md_names_tests_that_exist():
    """SECURITY.md names, for each promise, the tests that hold cuda2hip to it: each one named
    (`file.py::test_name`, or `::test_name` for the file named before, or a whole file) exists."""
    import ast

    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    sections = [s for s in text.split("\n- **")[1:]]
    assert len(sections) >= 10
    named = 0
    for section in sections:
        refs = re.findall(r"`((?:test_\w+\.py)?(?:::test_\w+)?)`", section.split("Tests:", 1)[-1])
        assert "Tests:" in section and refs, section[:80]
        current = None
        for ref in refs:
            file, _, name = ref.partition("::")
            current = file or current
            path = ROOT / "tests" / current
            assert path.is_file(), ref
            if name:
                functions = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
                assert name in functions, (current, name)
            named += 1
    assert named >= 30
