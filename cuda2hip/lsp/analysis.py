"""One analysis of one version of an open document: what `check` reports for its text, as
diagnostics, with what code actions and hovers need (the findings, their fixes, the rules)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ..findings import Finding
from ..lang.source import UTF8_BOM, SourceError, SourceText
from ..run.in_memory import INTERNAL_ERROR, check_text
from ..settings import Settings
from .diagnostics import diagnostic, problem
from .positions import LineIndex
from .projects import Project, ProjectError, Projects

DEFAULT = Settings()  # the file types a file whose configuration is broken is judged by


class Analysis:
    """`findings`: the active ones (suppressed and baselined ones are not shown, as `check`
    does not print them); `diagnostics[i]` is the diagnostic of `findings[i]`, unless
    `findings` is empty and the diagnostics say why the file was not analysed."""

    def __init__(self, uri: str, version: int | None, raw: bytes, encoding: str):
        self.uri = uri
        self.version = version
        self.raw = raw  # the editor's text, UTF-8
        self.index = LineIndex(raw, encoding)
        self.shift = len(UTF8_BOM) if raw.startswith(UTF8_BOM) else 0  # findings' offsets start after it
        self.source: SourceText | None = None  # the text as the analysis read it
        self.path: Path | None = None
        self.project: Project | None = None
        self.findings: list[Finding] = []
        self.diagnostics: list[types.Diagnostic] = []
        self.error: str | None = None  # why the file has no findings (the log gets it too)
        self.severe = False  # `error` is an error of the configuration or of cuda2hip, not the content's
        self.trace: str | None = None  # the traceback of an internal error of the server
        self.project_key: tuple | None = None

    def at(self, start: int, end: int) -> list[int]:
        """Numbers of the findings whose range meets the editor's bytes [start, end]."""
        shift = self.shift
        return [i for i, f in enumerate(self.findings) if f.start + shift <= end and start <= f.end + shift]

    def raw_of(self, data: bytes) -> bytes:
        """The editor's bytes of an edited analysed text `data` (BOM and CR line breaks back)."""
        return self.source.with_data(data).to_bytes()

    def check(self, raw: bytes):
        """`check`'s result for other content of the same file (code actions try edits)."""
        project = self.project
        return check_text(raw, self.path, project.settings, project.engine, baseline=project.baseline)


def analyse(uri: str, version: int | None, path: Path, text: str, encoding: str, projects: Projects) -> Analysis:
    """The analysis of `text`, the content of the file `path` at `version`."""
    raw = text.encode("utf-8", errors="replace")
    out = Analysis(uri, version, raw, encoding)
    out.path = path
    out.project_key = key = projects.key(path)
    try:
        project = projects.project(path, key)
    except ProjectError as exc:
        if DEFAULT.language_for(path) is None:
            return out  # not a file cuda2hip would look at: its configuration is not its business
        out.error, out.severe = str(exc), True
        out.diagnostics = [problem(out.error)]
        return out
    out.project = project
    if project.language(path) is None or project.excluded(path):
        return out  # a file `check` in the project would not look at
    try:
        out.source = SourceText.from_bytes(raw, str(path))
    except SourceError as exc:
        out.error = exc.reason
        out.diagnostics = [problem(exc.reason, types.DiagnosticSeverity.Warning)]
        return out
    result = check_text(raw, path, project.settings, project.engine, baseline=project.baseline)
    if result.error is not None:  # refused content (not this language), or an internal error
        out.error = result.error.reason
        out.severe = result.error.reason.startswith(INTERNAL_ERROR)
        out.diagnostics = [problem(out.error, types.DiagnosticSeverity.Error if out.severe
                                   else types.DiagnosticSeverity.Warning)]
        return out
    out.findings = [f for f in result.findings if not f.suppressed]
    engine = project.engine
    out.diagnostics = [diagnostic(f, out.index, out.shift, engine, i) for i, f in enumerate(out.findings)]
    return out
