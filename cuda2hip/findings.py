"""Findings, fixes and edits: the data every stage of the pipeline passes on."""

from __future__ import annotations

from enum import Enum, IntEnum

from msgspec import Struct, field


class Severity(IntEnum):
    HINT = 0
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> "Severity":
        try:
            return cls[value.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {value!r} (hint, info, warning, error)") from None


class Applicability(str, Enum):
    """How trustworthy a fix is (ruff's model): `fix` applies SAFE, `--unsafe-fixes` adds UNSAFE,
    DISPLAY_ONLY is shown to the user and never applied."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


EFFORTS = ("none", "low", "medium", "high")
# Finding.extra key: the API (name, header, flag) a finding is about; the manual-work estimate
# counts one port per rule and API (report/effort.py)
API = "api"


class Edit(Struct, frozen=True):
    """Replace bytes [start, end) of the file with `text` (an insertion when start == end)."""

    start: int
    end: int
    text: str

    def shifted(self, delta: int) -> "Edit":
        return Edit(self.start + delta, self.end + delta, self.text)


class Fix(Struct, frozen=True):
    applicability: Applicability
    edits: tuple[Edit, ...]
    description: str = ""

    def shifted(self, delta: int) -> "Fix":
        return Fix(self.applicability, tuple(e.shifted(delta) for e in self.edits), self.description)


class Finding(Struct):
    code: str
    rule_id: str
    severity: Severity
    path: str
    start: int  # byte offsets into the file's UTF-8 data (BOM excluded)
    end: int
    line: int  # 1-based; columns count code points
    column: int
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = None
    effort: str = "low"
    suppressed: bool = False
    fixed: bool = False  # set by `fix` for findings whose fix was applied
    extra: dict = field(default_factory=dict)

    @property
    def sort_key(self):
        return (self.path, self.start, self.end, self.code, self.message)

    def to_dict(self) -> dict:
        """JSON shape of a finding (a stable public format: add keys, never rename them)."""
        data = {
            "code": self.code,
            "rule_id": self.rule_id,
            "severity": self.severity.label,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "effort": self.effort,
            "suppressed": self.suppressed,
            "fixed": self.fixed,
            "fix": None,
        }
        if self.fix is not None:
            data["fix"] = {
                "applicability": self.fix.applicability.value,
                "description": self.fix.description,
                "edits": [{"start": e.start, "end": e.end, "content": e.text} for e in self.fix.edits],
            }
        if self.extra:
            data["data"] = self.extra
        return data


class FileError(Struct):
    """Input that could not be processed (reported, counted, and left untouched)."""

    path: str
    reason: str

    def to_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}


# Findings travel msgpack-encoded (from workers, in the store): a list of them is decoded when
# first read, and often only counted.
_DECODER = None


def decode_findings(raw) -> list[Finding]:
    """The findings of a msgpack-encoded list."""
    global _DECODER
    if _DECODER is None:  # built on first use: a run that only counts findings never decodes
        import msgspec

        _DECODER = msgspec.msgpack.Decoder(list[Finding])
    return _DECODER.decode(raw)


def own_paths(findings: list[Finding], path: str) -> list[Finding]:
    """`findings` (decoded: of the file `path`) with that file's name (see run/cached.py's encode_entry)."""
    if findings and findings[0].path != path:
        for f in findings:
            f.path = path
    return findings


def count_encoded(raw) -> int:
    """The length of a msgpack-encoded list, from its header."""
    data = bytes(raw[:5])
    head = data[0]
    if 0x90 <= head <= 0x9F:
        return head & 0x0F
    if head == 0xDC:
        return int.from_bytes(data[1:3], "big")
    if head == 0xDD:
        return int.from_bytes(data[1:5], "big")
    raise ValueError(f"not a msgpack array (0x{head:02x})")
