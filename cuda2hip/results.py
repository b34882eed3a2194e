"""What a run takes and gives back: the files it works on (SourceFile), its mode, each file's
result (FileResult), the run's (RunResult), and where a fix run's results go instead of the
files themselves (Delivery)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Protocol

from msgspec import Struct

from .findings import FileError, Finding, count_encoded, decode_findings, own_paths


class SourceFile(Struct, frozen=True):
    """A file a run works on (project/discover.py finds them)."""

    path: Path  # as the user sees it (relative to cwd where possible)
    language: str
    # Where it is, resolved once when it was found (absolute, without links): read and written
    # there without following a link (system/nofollow.py). "": not resolved, `path` is used.
    real: str = ""


class Mode(str, Enum):
    CHECK = "check"
    FIX = "fix"  # write fixed files
    PREVIEW = "preview"  # compute fixes, write nothing (--diff, --stdout)


class FileResult:
    """One file's outcome (a plain class: `fixed` is a property, decoded when first read)."""

    def __init__(self, path: str, language: str, findings: list[Finding] | None = None,
                 fixed: list[Finding] | None = None, error: FileError | None = None,
                 converged: bool = True):
        self.path = path
        self.language = language
        self.findings = [] if findings is None else findings  # what remains (after fixing, in fix modes)
        self.fixed = [] if fixed is None else fixed  # findings whose fix was applied
        self.error = error
        self.original: bytes | None = None  # full file bytes, kept when the file changed
        self.migrated: bytes | None = None
        self.written = False
        self.converged = converged
        self.destination: str | None = None  # where a Delivery wrote the file (output tree, renames)
        self.scanned = error is None  # analysed (with an error: its fixes could not be made or written)
        self.unwritten = False  # its fixes were not written (see `not_written`)
        # `#include "..."` directives of the result, (start, end, name): which local headers the
        # file brings in (header_scope.py), found where the bytes are at hand (workers, cache hits).
        self.includes: tuple = ()

    @property
    def changed(self) -> bool:
        return self.migrated is not None and self.migrated != self.original

    def not_written(self, reason: str) -> None:
        """The fixed file could not be written (`reason`): nothing of it was fixed. The run then
        reports the findings of the file as it is (runner.run_files)."""
        self.error = FileError(self.path, reason)
        self.fixed, self.original, self.migrated, self.written, self.destination = [], None, None, False, None
        self.scanned = self.unwritten = True

    # From a worker, the fixed findings arrive encoded and are decoded when first read: a run
    # often only counts them (decoding tens of thousands costs the parent CPU the workers need).
    _fixed_raw = None

    @property
    def fixed(self) -> list[Finding]:
        raw = self._fixed_raw
        if raw is not None:
            self._fixed = own_paths(decode_findings(raw), self.path)
            self._fixed_raw = None
        return self._fixed

    @fixed.setter
    def fixed(self, value: list[Finding]) -> None:
        self._fixed = value
        self._fixed_raw = None

    def set_encoded_fixed(self, raw) -> None:
        self._fixed = []
        self._fixed_raw = raw

    @property
    def fixed_count(self) -> int:
        raw = self._fixed_raw
        if raw is not None:
            return count_encoded(raw)
        return len(self._fixed)


class RunResult(Struct):
    files: list[FileResult]
    errors: list[FileError]  # discovery errors and per-file errors
    mode: Mode
    baselined: int = 0  # findings dropped because a --baseline file lists them

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def fixed(self) -> list[Finding]:
        return [f for r in self.files for f in r.fixed]

    @property
    def fixed_count(self) -> int:
        return sum(r.fixed_count for r in self.files)

    @property
    def files_scanned(self) -> int:
        return sum(1 for r in self.files if r.scanned)

    @property
    def files_changed(self) -> int:
        return sum(1 for r in self.files if r.changed)


class Delivery(Protocol):
    """Where the results of a fix run go, instead of rewriting each file in place
    (see output_tree.TreePlan). Must be picklable: workers get a copy."""

    def transform(self, item: SourceFile, data: bytes) -> bytes:
        """Last edits that depend on the whole tree (e.g. includes of renamed files)."""

    def deliver(self, item: SourceFile, raw: bytes, final: bytes | None) -> tuple[str | None, str | None]:
        """Write the file (`final`: its new content; None: a file refused as bad input).
        Returns (where it was written or None, error reason or None)."""
