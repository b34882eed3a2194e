"""Fingerprints of findings that survive line shifts: SARIF `partialFingerprints` and the
baseline use them to recognise a finding after code above it was added or removed.

fingerprint = sha256(code, repo-relative path, whitespace-normalised text of the finding's
first line, normalised text of the flagged code, occurrence index). The occurrence index tells
apart identical findings on identical lines of one file (counted in file order), so two equal
lines keep two entries. Line and column numbers are deliberately left out.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

from .sources import Sources, repo_path

VERSION = "cuda2hip/v1"  # key in SARIF partialFingerprints; bump when the recipe changes
_SPACE = re.compile(r"\s+")
MAX_NODE_TEXT = 500  # bytes of flagged code that take part (a whole-function node stays cheap)


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def fingerprints(findings, root: Path, sources: Sources) -> dict[int, str]:
    """id(finding) -> fingerprint, for every finding given (suppressed ones too)."""
    out: dict[int, str] = {}
    seen: Counter = Counter()
    for f in sorted(findings, key=lambda f: f.sort_key):
        src = sources.get(f.path)
        if src is not None:
            line = _normalise(src.line_text(f.line))
            node = _normalise(src.data[f.start:min(f.end, f.start + MAX_NODE_TEXT)].decode("utf-8", "replace"))
        else:  # unreadable now: fall back on what the finding says
            line, node = "", _normalise(f.message)
        key = (f.code, repo_path(f.path, root), line, node)
        index = seen[key]
        seen[key] += 1
        digest = hashlib.sha256("\0".join((*key, str(index))).encode("utf-8")).hexdigest()
        out[id(f)] = digest[:32]
    return out
