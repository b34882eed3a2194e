"""`fix --show-fixes`: the fixes a rewrite applied, per file and rule (as ruff lists them)."""

from __future__ import annotations

from collections import Counter, defaultdict

from .summary import shown_path


def applied_lines(run, ctx) -> list[str]:
    """`Fixed N findings:` then, per file, `  K × CODE (rule-id)`; [] when nothing was fixed."""
    by_file: dict[str, Counter] = defaultdict(Counter)
    for f in run.fixed:
        by_file[f.path][(f.code, f.rule_id)] += 1
    if not by_file:
        return []
    total = len(run.fixed)
    verb = "Would fix" if run.mode.value == "preview" else "Fixed"
    lines = [f"{verb} {total} finding{'s' if total != 1 else ''}:"]
    for path in sorted(by_file):
        lines.append(f"- {shown_path(path)}:")
        width = len(str(max(by_file[path].values())))
        for (code, rule_id), n in sorted(by_file[path].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {n:>{width}} × {code} ({rule_id})")
    lines.append("")
    return lines
