"""Per-file context of a Python file: the core FileContext plus the parsed module."""

from __future__ import annotations

from typing import Any

from msgspec import field

from ..context import FileContext


class PyFileContext(FileContext):
    module: Any = None  # PyModule
    rules: Any = None  # the RuleSet of this file (embedded sources get the CUDA set of its engine)
    # file offsets where embedded CUDA sources needed parse-error recovery, and their count
    embedded_error_starts: list[int] = field(default_factory=list)
    embedded_errors: int = 0
