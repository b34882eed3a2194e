"""A rule's documentation as Markdown (for `explain`, generated docs pages and reports)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .schema import Rule

# Where a rule's page is: this environment variable, else the "Rule docs" entry of the package's
# [project.urls]; "{code}" stands for the rule code (e.g.
# https://example.org/cuda2hip/blob/v0.2.0/docs/rules/{code}.md).
DOCS_URL_ENV = "CUDA2HIP_RULE_DOCS_URL"
DOCS_URL_LABEL = "rule docs"
# The generated page of each built-in rule (tools/generate_rule_docs.py), in a source checkout.
PAGES = Path(__file__).resolve().parents[2] / "docs" / "rules"

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


def rule_docs_template() -> str | None:
    """The URL template of the rule pages (see DOCS_URL_ENV), or None."""
    return os.environ.get(DOCS_URL_ENV, "").strip() or _package_docs_url()


@lru_cache(maxsize=1)
def _package_docs_url() -> str | None:
    """The "Rule docs" URL of the installed package's metadata (read once: ~1 ms a read, and a
    report asks for every rule's)."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata

        urls = metadata("cuda2hip").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == DOCS_URL_LABEL and url.strip():
            return url.strip()
    return None


def rule_page_url(rule: Rule) -> str | None:
    """The URL of the rule's published page, when a base for them is known (rule_docs_template)."""
    template = rule_docs_template()
    if not template:
        return None
    return template.replace("{code}", rule.code) if "{code}" in template else f"{template.rstrip('/')}/{rule.code}.md"


def rule_docs_url(rule: Rule) -> str | None:
    """Where to read the rule's documentation: its published page (`rule_page_url`), else its
    generated page in the source checkout the package runs from (a file: URI), else None."""
    url = rule_page_url(rule)
    if url is None and rule.builtin:
        page = PAGES / f"{rule.code}.md"
        if page.is_file():
            url = page.as_uri()
    return url
