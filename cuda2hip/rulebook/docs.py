"""A rule's documentation as Markdown (for `explain`, generated docs pages and reports)."""

from __future__ import annotations

import re
from pathlib import Path

from .schema import Rule

# The generated page of each built-in rule (tools/generate_rule_docs.py), in a source checkout.
PAGES = Path(__file__).resolve().parents[2] / "docs" / "rules"
_URL = re.compile(r"https?://[^\s)>\]\"']+")

FIX_WORDS = {
    "safe": "Safe: `cuda2hip fix` applies it.",
    "unsafe": "Unsafe: applied only with `--unsafe-fixes`; review the result.",
    "display-only": "Display-only: shown as a suggestion, never applied.",
}


def rule_markdown(rule: Rule) -> str:
    d = rule.docs
    out = [f"# {rule.code} {rule.id}", "", rule.summary, ""]
    meta = [f"kind `{rule.kind}`", f"language `{rule.language}`", f"severity `{rule.severity}`",
            f"effort `{rule.effort}`", "enabled by default" if rule.enabled else "opt-in (select it explicitly)"]
    out += ["*" + ", ".join(meta) + "*", ""]
    out += ["## What it does", "", d.what.strip(), "", "## Why", "", d.why.strip(), ""]
    if d.example.strip():
        out += ["## Example", "", "```cuda" if rule.language == "cuda" else f"```{rule.language}",
                d.example.strip("\n"), "```", ""]
    if d.use_instead.strip():
        out += ["## Use instead", "", "```cuda" if rule.language == "cuda" else f"```{rule.language}",
                d.use_instead.strip("\n"), "```", ""]
    out += ["## Fix safety", ""]
    if rule.fix:
        out.append(FIX_WORDS[rule.fix.applicability])
    else:
        out.append("No automatic fix.")
    if d.fix_safety.strip():
        out += ["", d.fix_safety.strip()]
    out.append("")
    if rule.options or d.options.strip():
        out += ["## Options", ""]
        if d.options.strip():
            out += [d.options.strip(), ""]
        for k, v in rule.options.items():
            out.append(f"- `{k}` (default: `{v!r}`)")
        out.append("")
    if d.references:
        out += ["## References", ""]
        out += [f"- {ref}" for ref in d.references]
        out.append("")
    return "\n".join(out)


def first_reference_url(rule: Rule) -> str | None:
    """The first web page the rule's docs cite: a public page about the finding's subject."""
    for ref in rule.docs.references:
        m = _URL.search(ref)
        if m:
            return m.group(0).rstrip(".,;")
    return None


def rule_docs_url(rule: Rule) -> str | None:
    """Where to read the rule's documentation: its generated page (a file: URI) where the
    package runs from a source checkout that has it, else `first_reference_url`."""
    if rule.builtin:
        page = PAGES / f"{rule.code}.md"
        if page.is_file():
            return page.as_uri()
    return first_reference_url(rule)
