"""The language server (`cuda2hip lsp`): findings as diagnostics, fixes and suppressions as code
actions, rule docs on hover, for any editor with an LSP client. The only package that imports
pygls; it builds on in_memory.py (check or fix an editor's text as `check` and `fix` would).

    server.py       open documents and the scheduling of their analyses
    handlers.py     the LSP messages answered;  protocol.py: malformed input answered
    lifetime.py     the editor's process watched; sys.path kept clean
    projects.py     the settings, engine and baseline of each file (configuration reload)
    analysis.py     one analysis of one version of a document
    diagnostics.py  findings as diagnostics;  hover.py: rule docs
    actions.py      quick fixes, "fix all", suppressions;  edits.py: text edits between texts
    positions.py    byte offsets <-> LSP positions (UTF-16, UTF-8, UTF-32)

What it takes from the rest of cuda2hip: in_memory (check_text, fix_text), config.find_config,
match.engine.Engine, report.baseline.read, rulebook.docs (rule_markdown, rule_docs_url),
fix.apply.apply_fixes, discover.exclude_spec, and the data of findings.py, source.py,
suppress.py (the directive syntax) and settings.py. The click command (cli_commands.py) hands
it the settings of a folder as `check` would make them.
"""

from __future__ import annotations


def serve(settings_for, *, fixed: bool = False, baseline=None) -> None:
    """Serve over stdin/stdout until the client exits (`exit`: status 0 after `shutdown`, else 1)
    or stdin ends; never returns. `settings_for(cwd, config)`, `fixed`, `baseline`: see
    projects.Projects."""
    import logging
    import sys

    from .lifetime import drop_from_sys_path

    drop_from_sys_path([])
    from .handlers import build
    from .projects import Projects

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="cuda2hip lsp: %(levelname)s: %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # only the protocol writes to stdout: anything else would corrupt it
    server = build(Projects(settings_for, fixed=fixed, baseline=baseline))
    server.start_io(stdin, stdout)
    server.exit_now(0 if server.shutting_down else 1)  # stdin ended: the client is gone
