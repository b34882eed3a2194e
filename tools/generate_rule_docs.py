#!/usr/bin/env python3
"""Generate the documentation pages of the built-in rules: docs/rules/<CODE>.md (the same
Markdown as `cuda2hip explain CODE`, from the rule's YAML) and docs/rules/README.md (an index).

Usage: python tools/generate_rule_docs.py [--out DIR] [--check]
  --check   exit 1 if the committed pages differ from what the rules give (the tests run it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "rules"
SCRIPT = "tools/generate_rule_docs.py"


def _source(rule) -> str:
    try:
        return Path(rule.source_path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return Path(rule.source_path).name


def pages() -> dict[str, str]:
    """File name -> content of every page (built-in rules only, opt-in ones included)."""
    sys.path.insert(0, str(ROOT))
    from cuda2hip.engine.engine import load_all_rules
    from cuda2hip.rulebook.docs import rule_markdown
    from cuda2hip.settings import Settings

    rules = sorted(load_all_rules(Settings(root=ROOT, use_cache=False)), key=lambda r: r.code)
    out = {}
    for rule in rules:
        out[f"{rule.code}.md"] = (rule_markdown(rule).rstrip("\n") + "\n\n---\n\n"
                                  f"*Generated from [`{_source(rule)}`](../../{_source(rule)}) by `{SCRIPT}`; "
                                  "edit the rule file, then run the script.*\n")
    index = ["# cuda2hip rules", "",
             f"One page per rule, generated from the rule files by `{SCRIPT}` "
             "(`cuda2hip explain CODE` prints the same text).", "",
             "| Code | Rule | Severity | Fix | Default | Summary |", "|---|---|---|---|---|---|"]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        index.append(f"| [{r.code}]({r.code}.md) | `{r.id}` | {r.severity} | "
                     f"{r.fix.applicability if r.fix else '-'} | {'yes' if r.enabled else 'opt-in'} | {summary} |")
    out["README.md"] = "\n".join(index) + "\n"
    return out


def stale(out_dir: Path) -> list[str]:
    """Names of pages that are missing, differ, or belong to no rule any more."""
    want = pages()
    have = {p.name for p in out_dir.glob("*.md")} if out_dir.is_dir() else set()
    bad = [name for name, text in want.items()
           if not (out_dir / name).is_file() or (out_dir / name).read_text(encoding="utf-8") != text]
    return sorted(bad + sorted(have - set(want)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale(args.out)
        for name in bad:
            print(f"out of date: {args.out / name}")
        if bad:
            print(f"run: python {SCRIPT}")
        return 1 if bad else 0
    want = pages()
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.md"):
        if old.name not in want:
            old.unlink()
    for name, text in want.items():
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(want)} pages to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
