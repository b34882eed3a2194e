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
class HumanPort:
    """The code base's own HIP port, compiled with the same toolchain as cuda2hip's output: the
    ceiling a migration is measured against. The port's tree is staged from the same source."""

    what: str  # how the project ports itself (shown in the docs)
    files: tuple[str, ...] = ()  # the port's tree (default: the code base's files, nothing excluded)
    exclude: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # replace the code base's
    preinclude: tuple[str, ...] = ()  # replace the code base's
    hipcc: tuple[str, ...] = ()  # replace the code base's
    # (regex, replacement) pairs mapping a unit's path to its port's (the first that matches;
    # none given: the same path); a unit whose port file does not exist has no port.
    units: tuple[tuple[str, str], ...] = ()


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
    human_port: HumanPort | None = None
    # files the project's build system writes (CMake's configure_file), path -> text, added to
    # the staged trees
    generated: dict[str, str] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.name.lower()).strip("-")


def load(path: Path = CORPUS_FILE) -> tuple[dict[str, Source], list[Codebase]]:
    data = tomllib.loads(path.read_text())
    sources = {name: Source(name=name, **fields) for name, fields in data["sources"].items()}
    codebases = []
    for entry in data["codebase"]:
        port = entry.pop("human_port", None)
        entry = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        if port is not None:
            port = {k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v
                    for k, v in port.items()}
            entry["human_port"] = HumanPort(**port)
        codebase = Codebase(**entry)
        if codebase.source not in sources:
            raise ValueError(f"{path}: code base {codebase.name!r} names unknown source {codebase.source!r}")
        codebases.append(codebase)
    return sources, codebases
