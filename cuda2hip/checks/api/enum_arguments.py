"""Enumerators mapped by the function they are passed to, not by their spelling alone: a cuBLAS
fill mode passed to a cuSOLVER call is hipSOLVER's `HIPSOLVER_FILL_MODE_LOWER` after migration,
elsewhere hipBLAS's `HIPBLAS_FILL_MODE_LOWER` (rules/api/data/enum-by-parameter.yaml). The call
is read from the text, so that it works in macro bodies as in code.

Used by the rename rules: the enum's rule picks the name by the callee, the function's rule makes a
rename safe whose only signature differences are such enum parameters given such enumerators.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

# A signature difference in an enum parameter, as api/signatures.py's data words it.
_ENUM_PARAMETER = re.compile(r"parameter (\d+) `\w+` is `\w+_t` in \w+, `\w+_t` in \w+")


class Mapping(NamedTuple):
    callee: re.Pattern  # the functions whose parameters take the other library's enum
    library: str  # "hipSOLVER"
    values: dict[str, str]  # CUDA enumerator -> HIP enumerator


def load(rule_path: str, relative: str, profile: str) -> list[Mapping]:
    """The mappings of a library profile from the table `relative` to the rule file."""
    from ...rulebook.data_files import load_data

    table = load_data(os.path.join(os.path.dirname(rule_path), relative)) or {}
    return [Mapping(re.compile(s["callee"]), s["library"], dict(s["values"])) for s in table.get(profile) or ()]


def mapped(mappings: list[Mapping], name: str, data: bytes, start: int, end: int) -> tuple[str, str] | None:
    """(HIP enumerator, library) of the enumerator `name` at data[start:end] where it is a whole
    argument of a call of one of the mapped functions."""
    where = argument_of(data, start, end)
    if where is None:
        return None
    for m in mappings:
        if name in m.values and m.callee.match(where[0]):
            return m.values[name], m.library
    return None


def arguments_fit(mappings: list[Mapping], function: str, detail: str, data: bytes, end: int) -> bool:
    """Whether every difference (`detail`) of `function`'s signature is an enum parameter whose
    argument, in the call whose name ends at `end`, is an enumerator mapped for it (or already
    the HIP one)."""
    values: dict[str, str] = {}
    for m in mappings:
        if m.callee.match(function):
            values.update(m.values)
    if not values or not isinstance(detail, str):
        return False
    positions = []
    for part in detail.split("; "):
        got = _ENUM_PARAMETER.fullmatch(part)
        if got is None:
            return False
        positions.append(int(got.group(1)) - 1)
    args = argument_texts(data, end)
    accepted = set(values) | set(values.values())
    return args is not None and all(i < len(args) and args[i] in accepted for i in positions)


_CONTINUATION = re.compile(rb"\\\r?\n")


def _name_before(data: bytes, i: int) -> str | None:
    """The identifier that ends just before byte `i` (blanks and template arguments skipped)."""
    while i > 0 and data[i - 1:i] in (b" ", b"\t", b"\r", b"\n", b"\\"):
        i -= 1
    if data[i - 1:i] == b">":  # f<int, 2>(...)
        depth = 0
        while i > 0:
            c = data[i - 1:i]
            if c in (b";", b"{", b"}", b"(", b")"):
                return None  # a comparison (`a > (x)`), not template arguments
            depth += c == b">"
            depth -= c == b"<"
            i -= 1
            if depth == 0:
                break
        if depth:
            return None
        while i > 0 and data[i - 1:i] in (b" ", b"\t"):
            i -= 1
    j = i
    while j > 0 and (data[j - 1:j].isalnum() or data[j - 1:j] == b"_"):
        j -= 1
    return data[j:i].decode("ascii") if j < i and not data[j:j + 1].isdigit() else None


def argument_of(data: bytes, start: int, end: int, limit: int = 4096) -> tuple[str, int] | None:
    """(callee, argument index) when the text `data[start:end]` is a whole argument of a call
    (`f(a, NAME, b)`), read from the text: it works in macro bodies as in code."""
    before = _CONTINUATION.sub(b" ", data[max(0, start - 64):start]).rstrip()
    after = _CONTINUATION.sub(b" ", data[end:end + 64]).lstrip()
    if not before.endswith((b"(", b",")) or not after.startswith((b",", b")")):
        return None
    depth = index = 0
    i = start - 1
    while i >= max(0, start - limit):
        c = data[i:i + 1]
        if c in (b")", b"]", b"}"):
            depth += 1
        elif c in (b"(", b"[", b"{"):
            if depth == 0:
                name = _name_before(data, i) if c == b"(" else None
                return (name, index) if name else None
            depth -= 1
        elif depth == 0 and c == b",":
            index += 1
        elif depth == 0 and c == b";":
            return None
        i -= 1
    return None


def argument_texts(data: bytes, end: int, limit: int = 4096) -> list[str] | None:
    """The arguments, as text, of the call whose callee name ends at `end` (`f(a, g(b), c)`)."""
    i = end
    while data[i:i + 1] in (b" ", b"\t", b"\r", b"\n", b"\\"):
        i += 1
    if data[i:i + 1] != b"(":
        return None
    args, depth, first = [], 0, i + 1
    for j in range(i + 1, min(len(data), i + limit)):
        c = data[j:j + 1]
        if c in (b"(", b"[", b"{"):
            depth += 1
        elif c in (b")", b"]", b"}"):
            if depth == 0:
                args.append(data[first:j].decode("utf-8", "replace").strip())
                return args
            depth -= 1
        elif c == b"," and depth == 0:
            args.append(data[first:j].decode("utf-8", "replace").strip())
            first = j + 1
    return None
