"""Unified diffs of migrated files."""

from __future__ import annotations

import difflib


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    b = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}"))
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
