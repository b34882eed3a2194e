"""What is left to do, per finding, per file and per folder: the HTML report's "needs a person /
fixable" filter and readiness view, and the Markdown report's folder table.

A finding is `fix` work when it has a safe fix (`cuda2hip fix` applies it), `manual` when it is
manual work by the estimate's definition (effort.counts: a warning or error without a safe fix),
and `advice` otherwise (info and hint findings). A file is `manual` when one of its active
findings is (or it could not be processed), else `fixable` when one has a safe fix, else `ready`:
nothing left to do. A folder counts the files under it, at any depth.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .effort import counts
from .sources import repo_path

READY, FIXABLE, MANUAL = "ready", "fixable", "manual"
STATES = (READY, FIXABLE, MANUAL)


def category(f) -> str:
    if f.fix is not None and f.fix.applicability.value == "safe":
        return "fix"
    return "manual" if counts(f) else "advice"


def file_states(run, root) -> dict[str, str]:
    """Repo-relative path -> state, for every file of the run."""
    states = {repo_path(r.path, root): READY for r in run.files}
    for f in run.findings:
        if f.suppressed:
            continue
        path = repo_path(f.path, root)
        kind = category(f)
        if kind == "manual":
            states[path] = MANUAL
        elif kind == "fix" and states.get(path, READY) == READY:
            states[path] = FIXABLE
    for e in run.errors:
        states[repo_path(e.path, root)] = MANUAL
    return states


@dataclass
class Folder:
    path: str  # "" for the root
    depth: int
    counts: Counter = field(default_factory=Counter)

    @property
    def files(self) -> int:
        return sum(self.counts[s] for s in STATES)

    def share(self, state: str) -> float:
        return self.counts[state] / self.files if self.files else 0.0

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name if self.path else "."


def folders(states: dict[str, str]) -> list[Folder]:
    """Every folder that holds a file of the run (counting the files below it), the root
    first, each followed by its subfolders, alphabetically. A folder whose files all sit in one
    subfolder is left out (the subfolder stands for it), so `a/b/c` chains take one row."""
    by_path: dict[str, Folder] = {}
    direct: Counter = Counter()
    for path, state in states.items():
        parent = PurePosixPath(path).parent
        direct[str(parent) if str(parent) != "." else ""] += 1
        chain = [p for p in reversed(parent.parents) if str(p) != "."] + ([parent] if str(parent) != "." else [])
        for d in [""] + [str(p) for p in chain]:
            folder = by_path.get(d)
            if folder is None:
                folder = by_path[d] = Folder(d, 0 if not d else d.count("/") + 1)
            folder.counts[state] += 1
    children: Counter = Counter(str(PurePosixPath(d).parent) if "/" in d else "" for d in by_path if d)
    kept = [f for f in by_path.values()
            if not f.path or direct[f.path] or children[f.path] != 1]
    kept.sort(key=lambda f: [part for part in f.path.split("/")] if f.path else [])
    # depth as shown: how many kept folders are above it
    paths = {f.path for f in kept}
    for f in kept:
        f.depth = sum(1 for p in PurePosixPath(f.path).parents if str(p) != "." and str(p) in paths) + (1 if f.path else 0)
    return kept
