"""corpus.toml -> typed sources and code bases."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CORPUS_FILE = Path(__file__).with_name("corpus.toml")


@dataclass(frozen=True)
class Source:
    name: str
    type: str  # "pypi" | "debian"
    package: str
    version: str
    sha256: str
    suite: str = ""
    component: str = "main"


@dataclass(frozen=True)
class Codebase:
    name: str
    source: str
    root: str
    files: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    units_matching: str = ""
    embedded: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    preinclude: tuple[str, ...] = ()
    nvcc: tuple[str, ...] = ()
    hipcc: tuple[str, ...] = ()
    reduced: tuple[str, ...] = field(default_factory=tuple)
    must_compile: tuple[str, ...] = field(default_factory=tuple)

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.name.lower()).strip("-")


def load(path: Path = CORPUS_FILE) -> tuple[dict[str, Source], list[Codebase]]:
    data = tomllib.loads(path.read_text())
    sources = {name: Source(name=name, **fields) for name, fields in data["sources"].items()}
    codebases = []
    for entry in data["codebase"]:
        entry = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        codebase = Codebase(**entry)
        if codebase.source not in sources:
            raise ValueError(f"{path}: code base {codebase.name!r} names unknown source {codebase.source!r}")
        codebases.append(codebase)
    return sources, codebases
