"""The local headers a run leaves out.

`check FILE` and `fix FILE` work on the files named (a directory names the files below it) and
never write others: the pre-commit fix hook passes the staged files only. A project header that
a file of the run includes but the run does not cover, and that `fix` would change, is reported
on the including line (HIP005) with the command that migrates it. `--follow-includes` takes such
headers into the run instead (discover.with_local_headers).

This is decided per run, after the files' own (cacheable) analyses: whether a header is covered
depends on what else was named, not on a file's content.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..engine.engine import LOCAL_HEADER_NOT_MIGRATED
from ..findings import Finding
from ..lang.cxx.includes import reached_outside, resolved_includes
from ..lang.source import SourceError, SourceText, read_bytes
from ..lang.suppress import DIRECTIVE
from ..project.discover import display_path, exclude_spec, held_back
from ..results import SourceFile


def report_headers_left_out(files: list[SourceFile], results, settings, engine, others=()) -> None:
    """Add a HIP005 finding to each result of `results` (the run over `files`, same order) for
    each include line that brings in headers outside the run which `fix` would change.
    `others`: files the run covers with other settings (a folder with its own configuration)."""
    with_includes = [(item, r) for item, r in zip(files, results) if r.includes and r.error is None]
    if not with_includes:
        return
    root = os.path.realpath(settings.root)
    in_run = {_identity(str(f.path)) for f in (*files, *others)} - {None}

    def covered(header: str) -> bool:
        return _identity(header) in in_run

    memo: dict = {}  # many files include the same headers from the same directory
    pending = []  # (rule, item, result, [(start, end, headers reached)])
    wanted: set[str] = set()
    for item, result in with_includes:
        rule = engine.ruleset_for(result.path, "cuda").diagnostic(LOCAL_HEADER_NOT_MIGRATED)
        if rule is None:
            continue
        path = str(item.path)
        here = os.path.dirname(os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path))
        lines = [(start, end, reached_outside(header, root, covered))
                 for start, end, header in resolved_includes(list(result.includes), here, root, memo)
                 if not covered(header)]
        if lines:
            pending.append((rule, item, result, lines))
            wanted.update(h for _, _, reached in lines for h in reached)
    if not pending:
        return
    changed = _needing_migration(sorted(wanted), settings, engine, root)
    for rule, item, result, lines in pending:
        reported: set[str] = set()
        source = None
        for start, end, reached in lines:
            headers = [h for h in reached if h in changed and h not in reported]
            if not headers:
                continue
            reported.update(headers)
            if source is None:
                source = _text(item, result)
                if source is None:
                    break
            # a header of no file type (`.inc`) is taken in only through the file that includes it
            through = None if all(settings.language_for(Path(h)) for h in headers) else result.path
            result.findings.append(_finding(rule, result.path, source, start, end, reached[0], headers, through))
        result.findings.sort(key=lambda f: f.sort_key)


def _identity(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _text(item: SourceFile, result) -> SourceText | None:
    """The file as the run left it (the positions of its findings refer to this text)."""
    try:
        return SourceText.from_bytes(result.migrated if result.changed else read_bytes(item.path, item.real), result.path)
    except SourceError:
        return None


def _needing_migration(headers: list[str], settings, engine, root: str) -> set[str]:
    """The headers of `headers` that `fix` (with this run's settings) would change: C/C++ files
    only, excluded ones left out, as --follow-includes would take them."""
    from .cached import ResultCache
    from ..results import Mode
    from .files import cache_kind
    from .workers import run_files

    spec = exclude_spec(settings)
    items = []
    for header in headers:
        path = Path(header)
        lang = settings.included_language(path)
        if lang != "cuda" or held_back(header, settings, spec) is not None:
            continue
        items.append(SourceFile(display_path(path), lang, header))
    if not items:
        return set()
    # The fix results cached for the headers answer for those still holding (a pre-commit run
    # meets the same headers every time); the others are analysed as a preview.
    changed: set[str] = set()
    missed = items
    cache = ResultCache.open(settings, cache_kind(Mode.PREVIEW, settings))
    if cache is not None:
        missed = []
        try:
            for item in items:
                try:
                    got = cache.changes(str(item.path), read_bytes(item.path, item.real), settings.root)
                except SourceError:
                    got = None  # reported (or not) as the analysis finds it
                if got is None:
                    missed.append(item)
                elif got:
                    changed.add(os.path.realpath(item.path))
        finally:
            cache.close()
    results = run_files(missed, settings, Mode.PREVIEW, engine) if missed else []
    return changed | {os.path.realpath(item.path) for item, r in zip(missed, results) if r.error is None and r.changed}


def _finding(rule, path: str, source: SourceText, start: int, end: int, direct: str,
             headers: list[str], through: str | None = None) -> Finding:
    shown = [str(display_path(Path(h))) for h in headers]
    named = ", ".join(f"`{s}`" for s in shown)
    if headers[0] == direct:
        what = f"the local header `{shown[0]}`"
        if len(shown) > 1:
            what += f" (and {', '.join(f'`{s}`' for s in shown[1:])}, which it includes)"
    else:
        what = (f"the local header{'s' if len(shown) > 1 else ''} {named} "
                f"(through `{display_path(Path(direct))}`)")
    command = ("cuda2hip fix " + " ".join(shlex.quote(s) for s in shown) if through is None
               else f"cuda2hip fix --follow-includes {shlex.quote(through)}")
    line, col, end_line, end_col = source.span(start, end)
    finding = Finding(code=rule.code, rule_id=rule.id, severity=rule.severity, path=path, start=start,
                      end=end, line=line, column=col, end_line=end_line, end_column=end_col,
                      message=rule.message(HEADERS=what, COMMAND=command), effort=rule.effort,
                      extra={"headers": shown})
    finding.suppressed = _suppressed(source, line, rule)
    return finding


def _suppressed(source: SourceText, line: int, rule) -> bool:
    """`cuda2hip: ignore[HIP005]` on the include line or alone on the line before, or a file-level one."""
    for number, text in _directive_lines(source):
        m = DIRECTIVE.search(text)
        file_level = m.group("kind").lower() == "file-ignore"
        if not file_level and number != line and not (number == line - 1 and _alone(text, m.start())):
            continue
        codes = m.group("codes")
        if codes is None or any(c.strip() in (rule.code, rule.id) for c in codes.split(",")):
            return True
    return False


def _alone(text: str, directive: int) -> bool:
    """Whether the comment holding the directive at `directive` is alone on its line (only such
    a comment covers the next line too)."""
    before = text[:directive]
    opener = max(before.rfind("//"), before.rfind("/*"))
    return opener >= 0 and not before[:opener].strip()


def _directive_lines(source: SourceText):
    if b"cuda2hip" not in source.data:
        return
    for number in range(1, len(source.line_starts) + 1):
        text = source.line_text(number)
        if "cuda2hip" in text and DIRECTIVE.search(text):
            yield number, text
