"""The HTML report's findings as compact JSON, which the page's script (templates/report.js)
renders: a few hundred bytes per finding instead of the ~1.8 KB of a pre-rendered, highlighted
HTML frame each.

    files     repo-relative paths of the files with findings, changes or errors (sorted)
    rules     [code, rule id] by index
    strings   messages and fix descriptions, each once (index 0: "")
    findings  one array each, sorted by file and position:
              [file, line, column, end column, rule, severity (0 hint .. 3 error), message,
               effort (index into efforts), fix (0 none, 1 safe, 2 unsafe, 3 display-only),
               fix description, preview + 1 (0: none), end line - line, suppressed (0/1)]
              with trailing zeros left out
    lines     per file, the source lines the frames and previews show, as runs
              [first line number, [text, ...]]; a line longer than LONG_LINE is a window
              [first column, text] around what findings mark in it
    previews  [first line, lines replaced, [the lines after the fix]]: one fix applied alone
    fixed     per file, [[rule, count], ...] of the fixes a rewrite applied
    diffs     per file, the unified diff of a rewrite
    fileErrors per file, why it was not processed
"""

from __future__ import annotations

from pathlib import Path

from ..findings import EFFORTS
from .codeview import fix_preview
from .diff import unified_diff
from .sources import Sources, repo_path

CONTEXT_LINES = 2
MAX_MARKED_LINES = 6  # a finding spanning more lines shows its first ones
LONG_LINE = 1000  # code points: a longer line (minified code) is kept as a window around marks
WINDOW_BEFORE, WINDOW_AFTER = 200, 600
# Code kept for frames, in code points: past this the remaining findings are listed without
# their code (a note says so), so a huge run stays a loadable page.
MAX_CODE = 6_000_000
FIX_KINDS = {None: 0, "safe": 1, "unsafe": 2, "display-only": 3}


class _Strings:
    def __init__(self):
        self.items = [""]
        self.index = {"": 0}

    def __call__(self, text: str) -> int:
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.items)
            self.items.append(text)
        return i


def _trim(row: list) -> list:
    while row and row[-1] == 0:
        row.pop()
    return row


def _runs(lines: dict[int, object]) -> list:
    """{number: text} -> [[first number, [text, ...]], ...] over consecutive numbers."""
    out: list = []
    for n in sorted(lines):
        if out and out[-1][0] + len(out[-1][1]) == n:
            out[-1][1].append(lines[n])
        else:
            out.append([n, [lines[n]]])
    return out


def _file_lines(src, wanted: dict[int, list[tuple[int, int]]]) -> tuple[dict[int, object], int]:
    """The text of each wanted line (a window of a long one, around its marked columns)."""
    out: dict[int, object] = {}
    size = 0
    for n, marks in wanted.items():
        text = src.line_text(n)
        if len(text) > LONG_LINE:
            lo = max(0, min(a for a, _ in marks) - WINDOW_BEFORE) if marks else 0
            hi = min(len(text), max(lo + LONG_LINE, (max(b for _, b in marks) + WINDOW_AFTER) if marks else 0))
            out[n] = [lo + 1, text[lo:hi]]
            size += hi - lo
        else:
            out[n] = text
            size += len(text)
    return out, size


def page_data(run, root: Path, rules, show_fixes: bool = True) -> dict:
    sources = Sources(run)
    strings = _Strings()
    by_path: dict[str, list] = {}
    for f in run.findings:  # suppressed ones too: the page hides them until asked
        by_path.setdefault(f.path, []).append(f)
    results = sorted((r for r in run.files if by_path.get(r.path) or r.changed or r.fixed or r.error is not None),
                     key=lambda r: repo_path(r.path, root))
    codes = sorted({f.code for f in run.findings} | {f.code for f in run.fixed})
    ids = {f.code: f.rule_id for f in run.fixed}
    ids.update({f.code: f.rule_id for f in run.findings})
    ids.update({r.code: r.id for r in rules})
    rule_index = {c: i for i, c in enumerate(codes)}
    data: dict = {"efforts": list(EFFORTS), "files": [], "rules": [[c, ids[c]] for c in codes], "strings": strings.items,
                  "findings": [], "lines": {}, "previews": [], "fixed": {}, "diffs": {}, "fileErrors": {}}
    budget = MAX_CODE
    framed = 0
    for file_index, result in enumerate(results):
        rel = repo_path(result.path, root)
        data["files"].append(rel)
        key = str(file_index)
        findings = sorted(by_path.get(result.path, []), key=lambda f: (f.line, f.column, f.code))
        src = sources.get(result.path) if findings and budget > 0 else None
        wanted: dict[int, list[tuple[int, int]]] = {}
        if src is not None:
            count = len(src.line_starts)
            if count > 1 and src.line_starts[-1] == len(src.data):
                count -= 1  # the empty "line" after the final line break
        for f in findings:
            preview = 0
            if src is not None:
                last_marked = min(f.end_line, f.line + MAX_MARKED_LINES - 1)
                for n in range(max(1, f.line - CONTEXT_LINES), min(count, last_marked + CONTEXT_LINES) + 1):
                    marks = wanted.setdefault(n, [])
                    if f.line <= n <= last_marked:
                        marks.append((f.column - 1 if n == f.line else 0,
                                      f.end_column - 1 if n == f.end_line else f.column + 80))
                wanted.setdefault(f.line, [])
                if show_fixes and f.fix is not None:
                    lines = fix_preview(src, f.fix)
                    if lines:
                        first = src.position(src.line_start(min(e.start for e in f.fix.edits)))[0]
                        replaced = sum(1 for p in lines if p.kind == "del")
                        for n in range(first, first + replaced):
                            wanted.setdefault(n, [])
                        data["previews"].append([first, replaced, [p.text for p in lines if p.kind == "add"]])
                        preview = len(data["previews"])
                framed += 1
            kind = f.fix.applicability.value if f.fix is not None else None
            data["findings"].append(_trim([
                file_index, f.line, f.column, f.end_column, rule_index[f.code], int(f.severity),
                strings(f.message), EFFORTS.index(f.effort) if f.effort in EFFORTS else 0, FIX_KINDS[kind],
                strings(f.fix.description or "") if f.fix is not None else 0, preview,
                f.end_line - f.line, 1 if f.suppressed else 0]))
        if src is not None and wanted:
            texts, size = _file_lines(src, wanted)
            budget -= size
            data["lines"][key] = _runs(texts)
        if result.fixed:
            counted: dict[str, int] = {}
            for f in result.fixed:
                counted[f.code] = counted.get(f.code, 0) + 1
            data["fixed"][key] = [[rule_index[c], n] for c, n in sorted(counted.items())]
        if result.changed:
            data["diffs"][key] = unified_diff(rel, result.original, result.migrated)
        if result.error is not None:
            data["fileErrors"][key] = result.error.reason
    if framed < len(data["findings"]):
        data["framesCut"] = framed
    return data
