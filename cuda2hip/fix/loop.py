"""The fix loop: lint, apply the allowed fixes, re-parse, repeat until nothing changes.

A pass may not add parse errors: when it does, the pass is redone one fix at a time (from the
end of the file, so earlier offsets stay valid) keeping only fixes that do not add errors; the
rejected ones are reported (`fix-reverted`) and never retried for that file. Because the loop
runs until no applicable fix is left, fix(fix(x)) == fix(x).
"""

from __future__ import annotations

from typing import Callable

from msgspec import Struct, field

from ..findings import Applicability, Finding, Fix
from ..lang.source import SourceText
from .apply import Change, apply_fixes, apply_fixes_tracked, choose_fixes

MAX_PASSES = 12


class Rejected(Struct):
    finding: Finding
    reason: str


class Pass(Struct):
    """One applied pass: the text it edited, the findings whose fixes it applied (offsets into
    that text) and what that made of the text (apply.Change: old -> new byte ranges; outside
    them the pass changed nothing). Accounts for every byte `fix` changes (tests/fidelity.py)."""

    before: bytes
    fixed: list[Finding]
    changes: list[Change]


class FixOutcome(Struct):
    source: SourceText
    remaining: list[Finding]  # findings of the final text
    fixed: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    rejected: list[Rejected] = field(default_factory=list)
    passes: int = 0
    converged: bool = True
    history: list[Pass] = field(default_factory=list)  # the passes that changed the text, in order
    pass_sizes: list[int] = field(default_factory=list)  # fixes each pass applied (of `fixed`)
    initial: list[Finding] = field(default_factory=list)  # the findings of the text given

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


def _key(f: Finding, data: bytes) -> tuple:
    # Identifies a fix across passes, where offsets move: the code, the text it replaces and
    # what it writes.
    return (f.code, f.message, tuple((data[e.start:e.end], e.text) for e in f.fix.edits))


def fix_source(
    source: SourceText,
    lint: Callable[[SourceText], "object"],
    parse_errors: Callable[[SourceText], int],
    allowed: frozenset[Applicability],
    max_passes: int = MAX_PASSES,
) -> FixOutcome:
    """`lint(source)` returns an object with `.findings` and `.parse_errors`."""
    current = source
    result = lint(current)
    initial = result.findings
    fixed: list[Finding] = []
    rejected: list[Rejected] = []
    history: list[Pass] = []
    banned: set[tuple] = set()
    sizes: list[int] = []
    for n in range(1, max_passes + 1):
        candidates = [
            f for f in result.findings
            if f.fix is not None and not f.suppressed and f.fix.applicability in allowed
            and f.fix.edits and _key(f, current.data) not in banned
        ]
        if not candidates:
            return FixOutcome(current, result.findings, fixed, rejected, n - 1, history=history, pass_sizes=sizes,
                              initial=initial)
        by_fix = {id(f.fix): f for f in candidates}
        chosen = choose_fixes([f.fix for f in candidates])
        new_source, changes = _edited(current, result, chosen)
        new_result = lint(new_source)
        if new_result.parse_errors > result.parse_errors:
            kept, bad = _one_by_one(current, chosen, parse_errors, result.parse_errors)
            for fix in bad:
                f = by_fix[id(fix)]
                banned.add(_key(f, current.data))
                rejected.append(Rejected(f, "the fix would add parse errors"))
            if not kept:
                continue
            new_source, changes = _edited(current, result, kept)
            new_result = lint(new_source)
            chosen = kept
        applied = [by_fix[id(fix)] for fix in chosen]
        fixed.extend(applied)
        sizes.append(len(chosen))
        if new_source.data == current.data:
            return FixOutcome(current, new_result.findings, fixed, rejected, n, history=history, pass_sizes=sizes,
                              initial=initial)
        history.append(Pass(current.data, applied, changes))
        current, result = new_source, new_result
    return FixOutcome(current, result.findings, fixed, rejected, max_passes, converged=False, history=history,
                      pass_sizes=sizes, initial=initial)


def _edited(source: SourceText, result, fixes: list[Fix]) -> tuple[SourceText, list[Change]]:
    """`source` with `fixes` applied, and what changed; the new text remembers the tree of
    `source` and the changes, so the frontend re-parses only around them."""
    data, changes = apply_fixes_tracked(source.data, fixes, source.newline)
    edited = source.with_data(data)
    tree = getattr(result, "tree", None)
    if tree is not None:
        edited.edited_from = (tree, source.data, changes)
        # The re-parse then holds the only reference, so the old tree can go before the new one
        # is built (parse.FRESH_PARSE_BYTES): two whole trees at once would double the peak.
        result.tree = None
    return edited, changes


def _one_by_one(source: SourceText, fixes: list[Fix], parse_errors, baseline: int):
    kept: list[Fix] = []
    bad: list[Fix] = []
    data = source.data
    errors = baseline
    # From the end of the file backwards: applying a fix never moves the offsets before it.
    for fix in sorted(fixes, key=lambda f: f.edits[0].start, reverse=True):
        trial = apply_fixes(data, [fix], source.newline)
        n = parse_errors(source.with_data(trial))
        if n > errors:
            bad.append(fix)
            continue
        kept.append(fix)
        data = trial
        errors = n
    return kept, bad


def allowed_applicabilities(unsafe: bool) -> frozenset[Applicability]:
    return frozenset({Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE})
