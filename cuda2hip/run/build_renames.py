"""Build files follow `--rename` (.cu -> .hip): the file names they list, and the patterns that
stand for every file of the renamed kind.

- names: `add_executable(app src/main.cu)`, `main: src/main.cu`, `CUFILES := a.cu b.cu \\`,
  relative to the build file's directory or to the top of the tree; `$(SRC)/k.cu` (a name after
  a variable) when exactly one renamed file ends in `/k.cu`;
- patterns (once any file was renamed from that extension): Make pattern rules and functions
  (`%.o: %.cu`, `%: %.cu`, `$(patsubst %.cu,%.o,...)`, `vpath %.cu src`), wildcards
  (`$(wildcard src/*.cu)`, CMake's `file(GLOB ... *.cu)`), substitution references
  (`$(CUFILES:.cu=.o)`) and old-fashioned suffix rules (`.cu.o:`, `.SUFFIXES: .cu`).

A name or pattern is a whole word: what separates words in CMake and Make (blanks, quotes,
parentheses, `;`, `,`, `=`, `:` and a line continuation's backslash).
"""

from __future__ import annotations

import posixpath
import re

BUILD_LANGUAGES = frozenset({"cmake", "make"})
_SEP = rb"\s\"'();,=:\\"
_BUILD_PATH = re.compile(rb"(?<![^" + _SEP + rb"])[A-Za-z0-9_./+-]+\.[A-Za-z]+(?![^" + _SEP + rb"])")
_AFTER_VARIABLE = re.compile(rb"(?<=[)}])/[A-Za-z0-9_./+-]+\.[A-Za-z]+(?![^" + _SEP + rb"])")


def rewrite_build_paths(data: bytes, rel: str, renames: dict[str, str], language: str = "make") -> bytes:
    """Update the file names and patterns of a CMake or Make file at `rel` for `renames`
    (old path -> new path, relative to the top of the tree)."""
    if not renames:
        return data
    base = posixpath.dirname(rel)

    def replace(m: re.Match) -> bytes:
        name = m.group(0).decode("ascii")
        for candidate in (posixpath.join(base, name), name):
            norm = posixpath.normpath(candidate)
            new = renames.get(norm)
            if new is not None and name.endswith(posixpath.basename(norm)):
                return _renamed(name, norm, new)
        return m.group(0)

    data = _BUILD_PATH.sub(replace, data)
    if b"$" in data:
        data = _after_variables(data, renames)
    return _rewrite_patterns(data, renames, language)


def _renamed(name: str, old: str, new: str) -> bytes:
    return (name[:len(name) - len(posixpath.basename(old))] + posixpath.basename(new)).encode()


def _after_variables(data: bytes, renames: dict[str, str]) -> bytes:
    """`$(DIR)/k.cu`: the directory is not known, the renamed file is when only one fits."""
    def replace(m: re.Match) -> bytes:
        tail = m.group(0).decode("ascii")
        fits = [old for old in renames if ("/" + old).endswith(tail)]
        if len(fits) != 1:
            return m.group(0)
        return _renamed(tail, fits[0], renames[fits[0]])

    return _AFTER_VARIABLE.sub(replace, data)


def _rewrite_patterns(data: bytes, renames: dict[str, str], language: str) -> bytes:
    for old_ext, new_ext in sorted({(posixpath.splitext(o)[1], posixpath.splitext(n)[1]) for o, n in renames.items()}):
        old, new = re.escape(old_ext.encode()), new_ext.encode()
        if old_ext.encode() not in data:
            continue
        end = rb"(?![A-Za-z0-9_.+-])"
        # `*.cu` (wildcards, GLOB) in both languages; in Makefiles also `%.cu`, `:.cu=` and suffix rules.
        data = re.sub(rb"(?<=\*)" + old + end, new, data)
        if language == "make":
            data = re.sub(rb"(?<=%)" + old + end, new, data)
            data = re.sub(rb"(?<=:)" + old + rb"(?==)", new, data)  # $(VAR:.cu=.o)
            data = re.sub(rb"(?m)^" + old + rb"(?=\.[A-Za-z0-9_]+[ \t]*:)", new, data)  # .cu.o:
            data = re.sub(rb"(?m)^(\.SUFFIXES[ \t]*:[^\n]*?)(?<![^\s])" + old + end, rb"\1" + new, data)
    return data
