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
    "statistics": ".statistics",
}


class ReportContext(Struct):
    engine: object  # cuda2hip.match.engine.Engine
    settings: object  # cuda2hip.settings.Settings
    color: bool = False
    show_suppressed: bool = False
    show_fixes: bool = True
    extra: dict = field(default_factory=dict)


def render(fmt: str, run, ctx: ReportContext) -> str:
    try:
        module = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})") from None
    return importlib.import_module(module, __name__).render(run, ctx)
