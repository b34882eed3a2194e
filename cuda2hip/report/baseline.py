"""Baseline files: `check --write-baseline FILE` records the findings of today, and
`check --baseline FILE` then reports only findings that are not in it (matched by fingerprint,
so the baseline survives lines being inserted or removed above a finding).

The file is JSON, sorted, with path / line / code / message kept beside each fingerprint so
that a reviewer can read a diff of it; only the fingerprint is used for matching.
"""

from __future__ import annotations

import json
from pathlib import Path

from .fingerprint import VERSION, fingerprints
from .sources import Sources, repo_path

FORMAT_VERSION = 1


class BaselineError(Exception):
    pass


def build(run, root: Path) -> dict:
    active = [f for f in run.findings if not f.suppressed]
    prints = fingerprints(run.findings, root, Sources(run))
    entries = [{"fingerprint": prints[id(f)], "code": f.code, "path": repo_path(f.path, root),
                "line": f.line, "message": f.message} for f in active]
    entries.sort(key=lambda e: (e["path"], e["line"], e["code"], e["fingerprint"]))
    return {"tool": "cuda2hip", "version": FORMAT_VERSION, "fingerprint": VERSION, "findings": entries}


def write(run, root: Path, path: Path) -> int:
    from ..fix.writeback import write_report

    data = build(run, root)
    write_report(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return len(data["findings"])


def read(path: Path) -> set[str]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("tool") != "cuda2hip" or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not a cuda2hip baseline (write one with --write-baseline)")
    if data.get("fingerprint") != VERSION:
        raise BaselineError(f"{path}: baseline uses fingerprints {data.get('fingerprint')!r}, this version "
                            f"computes {VERSION!r}; write it again with --write-baseline")
    return {e["fingerprint"] for e in data["findings"] if isinstance(e, dict) and "fingerprint" in e}


def apply(run, root: Path, known: set[str], sources: Sources | None = None) -> None:
    """Drop the active findings whose fingerprint is in the baseline; count them in
    `run.baselined`. `sources`: the text of the files (default: as the run left them)."""
    prints = fingerprints(run.findings, root, sources or Sources(run))
    dropped = 0
    for result in run.files:
        keep = []
        for f in result.findings:
            if not f.suppressed and prints[id(f)] in known:
                dropped += 1
            else:
                keep.append(f)
        result.findings = keep
    run.baselined += dropped
