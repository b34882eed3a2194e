"""The language server (`cuda2hip lsp`): findings as diagnostics, fixes and suppressions as code
actions, rule docs on hover, for any editor with an LSP client. The only package that imports
pygls; it builds on in_memory.py (check or fix an editor's text as `check` and `fix` would).

    server.py       the protocol: documents, scheduling, lifetime, handlers
    projects.py     the settings, engine and baseline of each file (configuration reload)
    analysis.py     one analysis of one version of a document
    diagnostics.py  findings as diagnostics;  hover.py: rule docs
    actions.py      quick fixes, "fix all", suppressions;  edits.py: text edits between texts
    positions.py    byte offsets <-> LSP positions (UTF-16, UTF-8, UTF-32)
"""

from __future__ import annotations


def serve(settings_for, *, fixed: bool = False, baseline=None) -> None:
    """Serve over stdio until the client exits (see server.py); never returns.
    `settings_for(cwd, config)`, `fixed`, `baseline`: see projects.Projects."""
    from .projects import Projects
    from .server import serve as run

    run(Projects(settings_for, fixed=fixed, baseline=baseline))
