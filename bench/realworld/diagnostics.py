"""The first error of a clang (hipcc) run, with the locations that explain it.

clang prints an error as `file:line:col: error: message`, preceded by its include stack
(`In file included from a.cu:3:` / `from b.h:7:`) and followed by notes (`note: expanded from
macro`, `note: in instantiation of ... requested here`, `note: candidate function`). A failure is
placed at the first of these locations that is inside the migrated tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DIAG = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>fatal error|error|warning|note): (?P<msg>.*)$")
INCLUDED = re.compile(r"^(?:In file included from |\s+from )(?P<path>[^:]+):(?P<line>\d+)[:,]")
QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_:]*)'")


@dataclass(frozen=True)
class Location:
    path: str
    line: int


@dataclass
class FirstError:
    location: Location
    message: str
    notes: list[tuple[Location, str]] = field(default_factory=list)
    include_stack: list[Location] = field(default_factory=list)  # outermost first

    @property
    def text(self) -> str:
        return f"{self.location.path}:{self.location.line}: {self.message}"

    def names(self) -> list[str]:
        """Identifiers the message quotes ('hipFoo', 'uint4'): the construct the error names."""
        return [n.split("::")[-1] for n in QUOTED.findall(self.message)]


def first_error(output: str) -> FirstError | None:
    stack: list[Location] = []
    error: FirstError | None = None
    for line in output.splitlines():
        included = INCLUDED.match(line)
        if included:
            if error is not None:
                break  # the next diagnostic's include stack: the first error is complete
            if line.startswith("In file"):
                stack = []
            stack.append(Location(included["path"], int(included["line"])))
            continue
        diag = DIAG.match(line)
        if not diag:
            continue
        loc = Location(diag["path"], int(diag["line"]))
        kind = diag["kind"]
        if error is None:
            if kind in ("error", "fatal error"):
                error = FirstError(loc, diag["msg"], include_stack=list(stack))
            elif kind == "warning":
                stack = []
            continue
        if kind == "note":
            error.notes.append((loc, diag["msg"]))
        else:
            break
    if error is None and output.strip():
        # Driver errors (no location), e.g. "clang: error: ..." or a timeout.
        for line in output.splitlines():
            if "error:" in line:
                return FirstError(Location("", 0), line.strip())
    return error


def candidate_locations(error: FirstError, in_tree) -> list[Location]:
    """Where a finding would predict this error, most specific first.

    `in_tree(path)` says whether a reported path is a file of the migrated tree. An error inside
    the tree is placed at its own line and the lines its macro-expansion and instantiation notes
    name. An error inside a system header (a HIP header, say) is placed where the tree reaches
    it: the instantiation notes that point into the tree, else the innermost #include of the
    tree on its include stack.
    """
    locations: list[Location] = []
    if in_tree(error.location.path):
        locations.append(error.location)
        locations += [loc for loc, msg in error.notes
                      if in_tree(loc.path) and ("expanded from" in msg or "requested here" in msg)]
        return locations
    locations += [loc for loc, msg in error.notes if in_tree(loc.path) and "requested here" in msg]
    if not locations:
        locations += [loc for loc in reversed(error.include_stack) if in_tree(loc.path)][:1]
    if not locations:
        locations += [loc for loc, _ in error.notes if in_tree(loc.path)][:1]
    return locations
