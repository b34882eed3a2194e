"""Python frontend: parse once with libcst, walk the tree once and hand each node to the rules
registered for its type; CUDA sources embedded in strings are linted by the CUDA frontend
(see cuda2hip/python/kinds/embedded.py). Suppressions are `# cuda2hip: ignore[CODE]` comments.

A file in which no rule can match (none of their needles occurs) and that holds no
suppression is not parsed at all: most Python files of a CUDA project need no libcst time.
"""

from __future__ import annotations

import warnings

from ...lang.source import SourceText
from ...lang.suppress import parse_directives
from ...settings import Settings
from ..diagnostics import report_parse_recovery, settle_suppressions
from ..engine import PARSE_RECOVERY, RuleSet
from .base import Frontend, LintResult
from .cuda import _dedupe

LANGUAGE = "python"
# Parse-error count of a file Python cannot parse: more than any number of embedded-source
# errors, so the fix loop always rejects a fix that breaks the Python syntax.
PYTHON_SYNTAX_ERROR = 1_000_000


class PythonFrontend(Frontend):
    language = LANGUAGE

    def lint(self, source: SourceText, rules: RuleSet, settings: Settings, *,
             validate: bool = True) -> LintResult:
        # A file Python cannot parse is reported (HIP002), not refused: `validate` changes nothing.
        return lint_python(source, rules, settings)

    def parse_errors(self, source: SourceText, rules: RuleSet, settings: Settings) -> int:
        # Errors in the embedded CUDA sources count too; the rules that find those strings do.
        return lint_python(source, rules, settings).parse_errors


def lint_python(source: SourceText, rules: RuleSet, settings: Settings) -> LintResult:
    data = source.data
    active = [r for r in rules.rules if hasattr(r, "wants") and r.wants(data)]
    has_directives = b"cuda2hip:" in data
    if not active and not has_directives:
        return LintResult([])
    from .python_context import PyFileContext
    from ...lang.python.module import ParserSyntaxError, PyModule

    ctx = PyFileContext(source=source, tree=None, language=LANGUAGE, settings=settings, rules=rules)
    try:
        module = PyModule(data)
    except ParserSyntaxError as exc:
        _report_syntax_error(ctx, rules, exc)
        return LintResult(ctx.findings, parse_errors=PYTHON_SYNTAX_ERROR,
                          error_lines=[f.line for f in ctx.findings])
    ctx.module = module
    dispatch: dict[str, list] = {}
    for rule in active:
        for kind in rule.kinds:
            dispatch.setdefault(kind, []).append(rule)
    if dispatch:
        get = dispatch.get

        def visit(node):
            for rule in get(type(node).__name__, ()):
                rule.visit(node, ctx)

        module.walk(visit)
    for rule in active:
        if rule.whole_file:
            rule.run_file(ctx)
    report_parse_recovery(ctx, rules, ctx.embedded_error_starts)
    ctx.findings[:] = _dedupe(ctx.findings)
    if has_directives:
        settle_suppressions(ctx, rules, parse_directives(module.comments, source))
    ctx.findings.sort(key=lambda f: f.sort_key)
    lines = sorted({source.position(s)[0] for s in ctx.embedded_error_starts})
    return LintResult(ctx.findings, parse_errors=ctx.embedded_errors, error_lines=lines)


def _report_syntax_error(ctx, rules: RuleSet, exc) -> None:
    rule = rules.diagnostic(PARSE_RECOVERY)
    if rule is None:
        return
    source = ctx.source
    line, column, reason = exc.raw_line, exc.raw_column, str(exc.message)
    try:  # Python's own parser names the offending line more precisely than libcst's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source.data, source.path, "exec", dont_inherit=True)
    except SyntaxError as err:
        if err.lineno:
            line, column, reason = err.lineno, max((err.offset or 1) - 1, 0), err.msg
    except (ValueError, OverflowError):
        pass
    line = max(1, min(line, len(source.line_starts)))
    offset = source.line_starts[line - 1] + len(source.line_text(line)[:column].encode("utf-8"))
    ctx.report(rule, offset, offset,
               f"Python syntax error at line {line} ({reason.rstrip('.')}); the file was not checked",
               data={"lines": [line]})
