"""The token tables of the build rules: nvcc flags and CUDA libraries. They are YAML files in
`rules/build/data/` (users extend them with rule options or their own rules); a rule names its
table in `params.table` (a path relative to the rule file) or holds the entries inline.
Tables load on first use, so a run that lints no build file never reads them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import msgspec


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="kebab"):
    pass


class FlagEntry(_Strict):
    names: list[str]
    # replacement of the flag (and its value); "" removes it; absent: report only
    replace: str | None = None
    # flag with a value: value -> replacement ("" removes); other values are left alone
    values: dict[str, str] | None = None
    takes_value: bool = False  # the value follows as NAME=VALUE or as the next token
    # split-list: the value is a comma-separated list of options that become options of their
    # own (-Xcompiler); offload-arch: an NVIDIA architecture, replaced by the --offload-arch
    # targets the user names (never guessed)
    action: Literal["replace", "split-list", "offload-arch", "report"] | None = None
    program: bool = False  # match the last path component (compiler names)
    applicability: Literal["safe", "unsafe"] = "safe"
    note: str = ""

    def kind(self) -> str:
        if self.action:
            return self.action
        if self.values is not None:
            return "values"
        return "replace" if self.replace is not None else "report"

    def wants_value(self) -> bool:
        return self.takes_value or self.values is not None or self.kind() in ("split-list", "offload-arch")


class LibraryTarget(_Strict):
    lib: str | None = None  # linker name (-lNAME)
    target: str | None = None  # CMake imported target
    package: str | None = None  # find_package() name that defines the target


class LibraryEntry(_Strict):
    cuda: str | None = None  # linker name of the CUDA library
    target: str | None = None  # its CMake imported target (CUDA::x)
    package: str | None = None  # its find_package() name, for packages of their own
    hip: LibraryTarget | None = None  # the hip* counterpart (default profile)
    roc: LibraryTarget | None = None  # the roc* counterpart (--roc); falls back to hip
    note: str = ""

    def counterpart(self, profile: str) -> LibraryTarget | None:
        if profile == "roc" and self.roc is not None:
            return self.roc
        return self.hip


class TableError(ValueError):
    pass


def _read(path: Path, kind):
    from ..rulebook.data_files import load_data

    try:
        raw = load_data(str(path))
    except (OSError, ValueError) as exc:
        raise TableError(f"{path}: cannot read table: {exc}") from None
    try:
        return msgspec.convert(raw, list[kind])
    except msgspec.ValidationError as exc:
        raise TableError(f"{path}: {exc}") from None


@lru_cache(maxsize=None)
def flag_table_file(path: str) -> tuple[FlagEntry, ...]:
    return tuple(_read(Path(path), FlagEntry))


@lru_cache(maxsize=None)
def library_table_file(path: str) -> tuple[LibraryEntry, ...]:
    return tuple(_read(Path(path), LibraryEntry))


def convert(raw, kind, where: str):
    try:
        return msgspec.convert(raw, list[kind])
    except msgspec.ValidationError as exc:
        raise TableError(f"{where}: {exc}") from None


class FlagIndex:
    """Flag entries by spelling."""

    def __init__(self, entries):
        self.exact: dict[str, FlagEntry] = {}
        self.programs: dict[str, FlagEntry] = {}
        for e in entries:
            for name in e.names:
                (self.programs if e.program else self.exact)[name] = e

    def lookup(self, token: str) -> tuple[FlagEntry, str, str | None] | None:
        """(entry, flag spelling, attached value) for a token."""
        e = self.exact.get(token)
        if e is not None:
            return e, token, None
        if "=" in token:
            name, _, value = token.partition("=")
            e = self.exact.get(name)
            if e is not None and e.wants_value():
                return e, name, value
        if self.programs:
            base = token.rsplit("/", 1)[-1]
            e = self.programs.get(base)
            if e is not None:
                return e, token, None
        return None


def resolve(rule_path: str, relative: str) -> str:
    return str((Path(rule_path).parent / relative).resolve())
