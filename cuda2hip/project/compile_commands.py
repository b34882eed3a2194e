"""What the project's build says about each file: a compilation database (`compile_commands.json`,
written by CMake with CMAKE_EXPORT_COMPILE_COMMANDS, Bear, Meson, ...).

It gives the folders `#include "..."` searches (-I, -iquote) and the macros each file is built
with (-D, -U), so that includes resolve and `#if` arms are decided as in the build. Only -I
folders inside the project count: the others (the CUDA toolkit, system libraries) hold no
project headers, and their names are not the project's.

The database is the one named (`--compile-commands`, `compile-commands` in the configuration) or
the first found in the usual build folders of the project root.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
from msgspec import Struct

# Where build systems usually leave it, relative to the project root.
USUAL_FOLDERS = (".", "build", "builddir", "_build", "out", "out/build", "cmake-build-debug",
                 "cmake-build-release", "build/debug", "build/release")
# An argument that takes the next one as its value (`-I dir`, `-D NAME`).
_WITH_VALUE = ("-I", "-iquote", "-D", "-U", "-isystem", "-include", "-o", "-x", "-MF", "-MT", "-MQ")


class CompileCommandsError(Exception):
    pass


class BuildFacts(Struct):
    include_dirs: tuple[str, ...] = ()  # resolved, inside the project, in first-seen order
    defines: dict[str, tuple[tuple[str, int | None], ...]] = {}  # resolved file -> its -D macros


def find(root: Path) -> Path | None:
    """The compilation database of the project at `root`, from its usual build folders; one
    that another user owns or can write (or whose folder is such) is not read, as a
    configuration file is not (trust.py), with a warning: `--compile-commands` names it."""
    from .config import _warn
    from ..system.trust import untrusted

    for folder in USUAL_FOLDERS:
        candidate = root / folder / "compile_commands.json"
        if candidate.is_file():
            why = untrusted(candidate.parent, own_group=True) or untrusted(candidate, own_group=True)
            if why is not None:
                _warn(f"not reading {candidate}: {why}; name it with --compile-commands to use it")
                continue
            return candidate
    return None


def read(path: Path, root: Path) -> BuildFacts:
    """The include folders (inside `root`) and per-file macros of the database at `path`."""
    try:
        entries = msgspec.json.decode(path.read_bytes())  # (json's import: a ms of every start-up)
    except OSError as exc:
        raise CompileCommandsError(f"{path}: cannot read the compilation database: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CompileCommandsError(f"{path}: not a compilation database (invalid JSON: {exc})") from None
    if not isinstance(entries, list):
        raise CompileCommandsError(f"{path}: not a compilation database (a JSON array of commands)")
    real_root = os.path.realpath(root)
    dirs: dict[str, None] = {}
    defines: dict[str, tuple[tuple[str, int | None], ...]] = {}
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
                or not isinstance(entry.get("directory", ""), str):
            raise CompileCommandsError(f"{path}: entry {n}: needs \"directory\" and \"file\" strings")
        args = entry.get("arguments")
        if args is None:
            command = entry.get("command")
            if not isinstance(command, str):
                raise CompileCommandsError(f"{path}: entry {n}: needs \"arguments\" or \"command\"")
            import shlex

            try:
                args = shlex.split(command)
            except ValueError as exc:
                raise CompileCommandsError(f"{path}: entry {n}: cannot split its command: {exc}") from None
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise CompileCommandsError(f"{path}: entry {n}: \"arguments\" must be a list of strings")
        directory = os.path.join(os.path.dirname(os.path.abspath(path)), entry.get("directory") or ".")
        macros: dict[str, int | None] = {}
        for flag, value in _flags(args[1:]):
            if flag in ("-I", "-iquote"):
                folder = os.path.realpath(os.path.join(directory, value))
                if folder == real_root or folder.startswith(real_root + os.sep):
                    dirs.setdefault(folder)
            elif flag == "-D":
                name, _, text = value.partition("=")
                if name:
                    macros[name] = _number(text) if text else 1
            elif flag == "-U":
                macros.pop(value, None)
        if macros:
            defines[os.path.realpath(os.path.join(directory, entry["file"]))] = tuple(sorted(macros.items()))
    return BuildFacts(tuple(dirs), defines)


def _flags(args: list[str]):
    """(flag, value) of the arguments that take one, joined (`-Ifoo`) or not (`-I foo`)."""
    it = iter(args)
    for arg in it:
        for flag in _WITH_VALUE:
            if arg == flag:
                value = next(it, None)
                if value is not None:
                    yield flag, value
                break
            if arg.startswith(flag) and flag in ("-I", "-D", "-U", "-iquote"):
                yield flag, arg[len(flag):]
                break


def _number(text: str) -> int | None:
    """The value of a -D macro as `#if` reads it (an integer literal), else None."""
    text = text.strip().rstrip("uUlL")
    try:
        return int(text, 0)
    except ValueError:
        return None
