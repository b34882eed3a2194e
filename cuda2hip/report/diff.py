"""Unified diffs of migrated files.

The diff is computed on bytes, split at line breaks only (`\\n`, `\\r\\n`, `\\r`): str.splitlines
would also split at form feeds and other Unicode separators, and the diff would no longer
apply to the file (`fix --diff` must show exactly what `fix` writes, in the file's encoding).
"""

from __future__ import annotations

import difflib

from ..lang.source import eight_bit_encoding

NO_NEWLINE = b"\n\\ No newline at end of file\n"


def unified_diff_bytes(path: str, before: bytes, after: bytes) -> bytes:
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    name = path.encode("utf-8", errors="surrogateescape")
    out = []
    for line in difflib.diff_bytes(difflib.unified_diff, a, b, fromfile=b"a/" + name, tofile=b"b/" + name):
        out.append(line if line.endswith((b"\n", b"\r")) else line + NO_NEWLINE)
    return b"".join(out)


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    """The diff as text (for reports), decoded as the file is read (source.py)."""
    data = unified_diff_bytes(path, before, after)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode(eight_bit_encoding(data))
