"""Findings the engine emits itself (unused suppressions, parse recovery, reverted fixes, the
file's encoding), shared by every frontend; their rules are of the `diagnostic` kind
(checks/diagnostics.py)."""

from __future__ import annotations

from ..findings import Edit, Finding
from ..lang.lazy_regex import LazyRegex
from ..lang.source import ENCODING_NAMES
from ..lang.suppress import ONLY_DIRECTIVE, Directive, apply_suppressions, unused_codes
from .engine import (LOCAL_HEADER_NOT_MIGRATED, PARSE_RECOVERY, SOURCE_ENCODING, UNKNOWN_SUPPRESSION_CODE,
                     UNUSED_SUPPRESSION, RuleSet)

MAX_LINES_LISTED = 8


def report_parse_recovery(ctx, rules: RuleSet, error_starts: list[int]) -> None:
    rule = rules.diagnostic(PARSE_RECOVERY)
    if rule is None or not error_starts:
        return
    lines = sorted({ctx.source.position(s)[0] for s in error_starts})
    shown = ", ".join(str(n) for n in lines[:MAX_LINES_LISTED])
    if len(lines) > MAX_LINES_LISTED:
        shown += f" and {len(lines) - MAX_LINES_LISTED} more"
    first = min(error_starts)
    ctx.report(rule, first, first, rule.message(LINES=shown, COUNT=str(len(lines))),
               data={"lines": lines})


_NON_ASCII = LazyRegex(rb"[\x80-\xff]")


def report_source_encoding(ctx, rules: RuleSet) -> None:
    """A file read in an 8-bit encoding (source.py) says so, on its first byte outside ASCII."""
    source = ctx.source
    if source.encoding == "utf-8":
        return
    rule = rules.diagnostic(SOURCE_ENCODING)
    m = _NON_ASCII.search(source.data)
    if rule is None or m is None:
        return
    char = source.data[m.start():].decode("utf-8", errors="ignore")[:1]
    end = m.start() + len(char.encode("utf-8"))
    ctx.report(rule, m.start(), end, rule.message(ENCODING=ENCODING_NAMES[source.encoding],
                                                  BYTE=f"{char.encode(source.encoding)[0]:02x}"),
               data={"encoding": source.encoding})


def settle_suppressions(ctx, rules: RuleSet, directives: list[Directive]) -> None:
    """Mark suppressed findings and report directives that suppress nothing (HIP001) or name
    codes no rule has (HIP004)."""
    findings: list[Finding] = ctx.findings
    apply_suppressions(findings, directives)
    unused_rule = rules.diagnostic(UNUSED_SUPPRESSION)
    unknown_rule = rules.diagnostic(UNKNOWN_SUPPRESSION_CODE)
    if unused_rule is None and unknown_rule is None:
        return
    known = rules.known_codes
    # A run decides about this code after the lint (header_scope.py): its directives are not
    # unused here.
    late = rules.diagnostic(LOCAL_HEADER_NOT_MIGRATED)
    for d in directives:
        if late is not None and d.codes:
            d.used.update(c for c in d.codes if c in (late.code, late.id))
        unknown = [c for c in d.codes or () if c not in known]
        if unknown and unknown_rule is not None:
            shown = ", ".join(_with_suggestion(c, known) for c in unknown)
            ctx.report(unknown_rule, d.start, d.end, unknown_rule.message(CODES=shown), data={"codes": unknown})
        unused = [c for c in unused_codes(d, known, rules.selected_codes) if c not in unknown]
        if not unused or unused_rule is None:
            continue
        shown = "all rules" if unused == ["*"] else ", ".join(unused)
        edits = _removal_edits(ctx, d, unused)
        f = ctx.report(unused_rule, d.start, d.end, unused_rule.message(CODES=shown), edits=edits,
                       description="Remove the unused suppression")
        # A directive naming its own unused code cannot suppress its report.
        if d.codes and any(c in (unused_rule.code, unused_rule.id) for c in d.codes) and set(unused) != set(d.codes):
            f.suppressed = True


# letters typed for the digits they look like (`HIP4O1`)
_LOOKALIKES = str.maketrans("OIL", "011")


def _with_suggestion(code: str, known: set[str]) -> str:
    from difflib import get_close_matches

    same = code.upper()[:3] + code.upper()[3:].translate(_LOOKALIKES)
    near = [same] if same in known else get_close_matches(
        code, sorted(k for k in known if k[:1].isupper()), n=1, cutoff=0.6)
    return f"{code} (did you mean {near[0]}?)" if near else code


def _removal_edits(ctx, d: Directive, unused: list[str]) -> list[Edit] | None:
    data = ctx.source.data
    if unused == ["*"] or (d.codes is not None and set(unused) >= set(d.codes)):
        if not ONLY_DIRECTIVE.match(d.comment):
            return None  # the comment says more than the directive: leave it to a human
        line_start = ctx.source.line_start(d.start)
        line_end = ctx.source.line_end(d.start)
        before = data[line_start:d.start]
        after = data[d.end:line_end]
        if not before.strip() and not after.strip():
            return [Edit(line_start, line_end, "")]  # the comment is the whole line
        # trailing comment: drop it and the blanks in front of it
        s = d.start
        while s > line_start and data[s - 1:s] in (b" ", b"\t"):
            s -= 1
        return [Edit(s, d.end, "")]
    if d.codes_span is None:
        return None
    keep = [c for c in d.codes if c not in unused]
    return [Edit(d.codes_span[0], d.codes_span[1], ",".join(keep))]
