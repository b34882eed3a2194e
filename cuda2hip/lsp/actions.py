"""Code actions on an analysis: each finding's fix as a quick fix (safe ones preferred, unsafe ones
labelled; display-only ones are never applied, so never offered), "suppress on this line", and
"fix all safe findings in this file" (the fix loop of `fix`, run on the editor's text).

An action is listed cheaply and its edit made when the client resolves it (`codeAction/resolve`)
or, for a client that cannot resolve, when it is listed. A suppression is offered only where a
trial check of the edited text shows that it suppresses the finding and changes nothing else."""

from __future__ import annotations

from collections import Counter

from lsprotocol import types

from ..findings import Applicability, Finding
from ..fix.apply import apply_fixes
from ..lang.suppress import DIRECTIVE
from ..run.in_memory import fix_text
from .analysis import Analysis
from .edits import text_edits, workspace_edit

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.cuda2hip"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]
QUICK_FIX = "fix"
SUPPRESS = "suppress"
ALL = "fix-all"
# The comment that starts a suppression in each language; in Python, CUDA source in strings
# takes its own comments too (docs/python.md).
COMMENTS = {"cuda": ("//",), "cmake": ("#",), "make": ("#",), "python": ("#", "//")}


def _fixable(f: Finding) -> bool:
    return f.fix is not None and bool(f.fix.edits) and f.fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)


def _title(f: Finding) -> str:
    what = f.fix.description or f"Apply the fix of {f.code}"
    if f.fix.applicability is Applicability.UNSAFE:
        return f"{what} ({f.code}, unsafe fix: review the result)"
    return f"{what} ({f.code})"


def _wanted(only, kind: str) -> bool:
    """Whether a request limited to the kinds `only` wants actions of `kind`."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def list_actions(a: Analysis, start: int, end: int, context: types.CodeActionContext, *,
                 resolve: bool, versioned: bool) -> list[types.CodeAction]:
    """The actions for the editor's bytes [start, end] (and for the diagnostics the client names
    in `context`). `resolve`: the client resolves edits later; else they are made now."""
    only = context.only
    numbers = set(a.at(start, end))
    for d in context.diagnostics or ():
        if isinstance(d.data, dict) and isinstance(d.data.get("finding"), int) and d.source == "cuda2hip" \
                and 0 <= d.data["finding"] < len(a.findings) and d.code == a.findings[d.data["finding"]].code:
            numbers.add(d.data["finding"])
    out: list[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix):
        for i in sorted(numbers, key=lambda i: (a.findings[i].start, i)):
            f = a.findings[i]
            if _fixable(f):
                out.append(types.CodeAction(title=_title(f), kind=types.CodeActionKind.QuickFix,
                                            diagnostics=[a.diagnostics[i]],
                                            is_preferred=f.fix.applicability is Applicability.SAFE,
                                            data=_data(a, QUICK_FIX, i)))
        for i in sorted(numbers, key=lambda i: (a.findings[i].start, i)):
            f = a.findings[i]
            action = types.CodeAction(title=f"Suppress {f.code} on this line", kind=types.CodeActionKind.QuickFix,
                                      diagnostics=[a.diagnostics[i]], data=_data(a, SUPPRESS, i))
            # Listed when a comment at the end of the line is sure to do; else only if a trial finds a way.
            if resolve and not _plain_line(a, f) and fill(action, a, versioned) is None:
                continue
            out.append(action)
    if _wanted(only, FIX_ALL) and any(_fixable(f) and f.fix.applicability is Applicability.SAFE for f in a.findings):
        out.append(types.CodeAction(title="Fix all safe findings in this file (cuda2hip)", kind=FIX_ALL,
                                    data=_data(a, ALL, None)))
    if not resolve:
        # Made now: a suppression that does not work here is left out.
        out = [act for act in out if act.edit is not None or fill(act, a, versioned) is not None]
    return out


def _plain_line(a: Analysis, f: Finding) -> bool:
    """Whether `f`'s line is plain code that a trailing comment suppresses: not Python (whose
    findings are often in a string's lines), not in a macro's continued lines."""
    if a.source is None or a.project is None or _language(a) == "python":
        return False
    starts = a.source.line_starts
    data = a.source.data
    for n in (f.line - 2, f.line - 1):
        if n < 0:
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(data)
        if data[starts[n]:end].rstrip(b"\r\n").endswith(b"\\"):
            return False
    return True


def _data(a: Analysis, what: str, number: int | None) -> dict:
    return {"uri": a.uri, "version": a.version, "action": what, "finding": number}


def fill(action: types.CodeAction, a: Analysis, versioned: bool) -> types.CodeAction | None:
    """`action` with its edit (listed for the analysis `a`); None when it cannot be made."""
    data = action.data or {}
    what, number = data.get("action"), data.get("finding")
    if what == ALL:
        new = _fix_all(a)
    elif isinstance(number, int) and 0 <= number < len(a.findings):
        f = a.findings[number]
        new = _fixed(a, f) if what == QUICK_FIX else _suppressed(a, f) if what == SUPPRESS else None
    else:
        new = None
    if new is None:
        return None
    action.edit = workspace_edit(a.uri, a.version, text_edits(a.index, new), versioned)
    return action


def _fixed(a: Analysis, f: Finding) -> bytes | None:
    """The editor's text with `f`'s fix applied (as `fix` applies one: newlines in the file's
    style, aligned macro continuations kept)."""
    if not _fixable(f) or a.source is None:
        return None
    src = a.source
    return a.raw_of(apply_fixes(src.data, [f.fix], src.newline))


def _fix_all(a: Analysis) -> bytes | None:
    """The editor's text after `fix` (safe fixes, until nothing changes)."""
    if a.project is None or a.source is None:
        return None
    result = fix_text(a.raw, a.path, a.project.settings, a.project.engine)
    if result.error is not None:
        return None
    return result.migrated if result.changed else a.raw


def _suppressed(a: Analysis, f: Finding) -> bytes | None:
    """The editor's text with a directive that suppresses `f`: added to a directive on its line
    or the line above, else a comment at the end of its line, else one on a line of its own
    above it; the first that a check of the result shows suppresses `f` and changes nothing else."""
    if a.source is None or a.project is None:
        return None
    before = Counter((g.code, g.message) for g in a.findings)
    before[(f.code, f.message)] -= 1
    for pos, insert in _placements(a, f):
        data = a.source.data
        new = a.raw_of(data[:pos] + insert.encode("utf-8") + data[pos:])
        result = a.check(new)
        if result.error is not None:
            continue
        moved = f.start + (len(insert.encode("utf-8")) if pos <= f.start else 0)
        if not any(g.suppressed and g.code == f.code and g.message == f.message and g.start == moved
                   for g in result.findings):
            continue
        after = Counter((g.code, g.message) for g in result.findings if not g.suppressed)
        if not after - before:  # no finding that was not there (a parse error, an unused directive)
            return new
    return None


def _placements(a: Analysis, f: Finding):
    """(byte offset, text to insert) of each way to suppress `f`, the preferred first."""
    src = a.source
    data = src.data
    starts = src.line_starts
    line = f.line - 1
    code = f.code

    def bounds(n: int) -> tuple[int, int]:
        begin = starts[n]
        stop = starts[n + 1] if n + 1 < len(starts) else len(data)
        while stop > begin and data[stop - 1:stop] in (b"\n", b"\r"):
            stop -= 1
        return begin, stop

    begin, stop = bounds(line)
    for n in (line, line - 1):
        if n < 0:
            continue
        b, e = bounds(n)
        m = DIRECTIVE.search(data[b:e].decode("utf-8", errors="replace"))
        if m and m.group("kind").lower() == "ignore" and m.group("codes") is not None:
            text = data[b:e].decode("utf-8", errors="replace")
            at = b + len(text[:m.end("codes")].encode("utf-8"))
            yield at, (", " if m.group("codes").strip() else "") + code
    text = data[begin:stop].decode("utf-8", errors="replace")
    indent = text[:len(text) - len(text.lstrip())]
    for comment in COMMENTS.get(_language(a), ("//",)):
        directive = f"{comment} cuda2hip: ignore[{code}]"
        if not text.rstrip().endswith("\\"):
            yield stop, ("  " if text.strip() else "") + directive
        yield begin, f"{indent}{directive}{src.newline}"  # (a CR-only file holds LF here: source.py)


def _language(a: Analysis) -> str:
    return a.project.language(a.path) or "cuda"
