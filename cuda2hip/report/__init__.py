"""Output formats. Each format is a module with `render(run, ctx) -> str`; they are imported
only when used."""

from __future__ import annotations

import importlib

from msgspec import Struct, field

# format name -> module (relative to this package)
FORMATS: dict[str, str] = {
    "text": ".text",
    "concise": ".concise",
    "json": ".json_format",
    "sarif": ".sarif",
    "github": ".github",
    "markdown": ".markdown",
    "html": ".html",
    "gitlab": ".gitlab",
    "junit": ".junit",
    "api-csv": ".api_csv",
    "statistics": ".statistics",
}
# Formats that list findings line by line: they show findings at or above `min_severity` and
# summarise the rest in one line (docs/reports.md, "Quiet by default"). The others keep every
# finding: JSON and SARIF are data for programs, Markdown and HTML count everything in their
# tables (and HTML filters on the page).
LINE_FORMATS = frozenset({"text", "concise", "github", "gitlab", "junit"})
# Shown by default in LINE_FORMATS: warnings and errors; `--show-info` / `--min-severity` change it.
DEFAULT_MIN_SEVERITY = "warning"


class ReportContext(Struct):
    engine: object  # cuda2hip.match.engine.Engine
    settings: object  # cuda2hip.settings.Settings
    color: bool = False
    show_suppressed: bool = False
    show_fixes: bool = True
    # --show-fixes: each fix's edit under its finding (text), the fixes applied (`fix`)
    fix_details: bool = False
    quiet: bool = False  # -q: the findings only, nothing on success
    min_severity: int = 0  # Severity value: LINE_FORMATS show findings at or above it
    extra: dict = field(default_factory=dict)


def render(fmt: str, run, ctx: ReportContext) -> str:
    try:
        module = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})") from None
    return importlib.import_module(module, __name__).render(run, ctx)
