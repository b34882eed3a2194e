"""`rename-collision` rule kind: overloads that renaming turns into one function.

`_cudaGetErrorEnum(cudaError_t)` and `_cudaGetErrorEnum(CUresult)` are two functions in CUDA
(`cudaError` and `cudaError_enum` are two enums) and one in HIP, where both types are
`hipError_t`: hipcc stops at the second with "redefinition". Which CUDA types meet in one HIP
type comes from the headers (type_identity, rules/api/collisions). The definitions are compared
in the file and against the project headers it includes (where the other definition of a
helper-header pair usually lives); a definition inside a branch that excludes the other does
not count. Where both definitions say the same once renamed (token for token, parameter names
aside), the later one is guarded out of HIP builds (safe: every call reaches the identical
first); otherwise both are reported, and guarding the later one is an unsafe fix: calls that
used to reach it reach the first one instead.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from ...api.tables import as_entry
from ...api.type_identity import Namer, load
from ...engine.compiled import CompiledRule, rule_kind
from ...findings import Edit
from ...lang import parse as parsing
from ...lang.cxx.functions import (Function, definition_node, definitions, describe, exclusive, file_definitions, line_span,
                                   file_words, overlap, param_name)
from ...lang.cxx.preprocessor.macros import amd
from ...lang.cxx.types import type_spelling
from ...lang.lazy_regex import LazyRegex
from .leftovers import all_table_entries
from .rename import resolve_for

_BUILTIN = LazyRegex(r"^(?:(?:void|bool|char|signed|unsigned|short|int|long|float|double|const|volatile)\b|[*&\s])+$")
GUARD = "#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)"
_TOKEN = LazyRegex(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\S', re.S)



def renamer(settings):
    """CUDA name -> the HIP name the rename rules write under `settings` (None: not renamed)."""
    entries = all_table_entries()
    cache: dict[str, str | None] = {}

    def rename(name: str) -> str | None:
        if name not in cache:
            row = entries.get(name.encode())
            cache[name] = None if row is None else resolve_for(as_entry(row), settings).target
        return cache[name]

    return rename


class _Def:
    """A function with what the comparison needs, on both sides of the renaming."""

    __slots__ = ("fn", "data", "path", "hip", "cuda", "spelled", "renamed")

    def __init__(self, fn: Function, data: bytes, path: str, namer: Namer, rename):
        self.fn, self.data, self.path = fn, data, path
        self.hip = fn.key(data, namer.hip)
        self.cuda = fn.key(data, namer.cuda)[-1]
        self.spelled = tuple(type_spelling(p, data, str) for p in fn.params)
        # whether a parameter type is still spelled with a CUDA name the renaming replaces
        self.renamed = any(rename(w) for s in self.spelled for w in re.findall(r"\w+", s))

    def line(self) -> int:
        return self.data.count(b"\n", 0, self.fn.node.start_byte) + 1

    def where(self, here: str) -> str:
        if self.path == here:
            return f"line {self.line()}"
        # the header as the including file names it (relative to its folder)
        return f"{os.path.relpath(self.path, os.path.dirname(os.path.realpath(here)))}:{self.line()}"

    def shape(self, namer: Namer) -> list[bytes]:
        """The definition's tokens, names renamed, parameter names numbered, comments dropped."""
        node = definition_node(self.fn)
        params = {}
        for i, p in enumerate(self.fn.params):
            name = param_name(self.data, p)
            if name is not None:
                params[name.encode()] = b"$%d" % i
        out = []
        for m in _TOKEN.finditer(self.data, node.start_byte, node.end_byte):
            tok = m.group()
            if tok.startswith((b"//", b"/*")):
                continue
            if tok in params:
                tok = params[tok]
            elif tok[:1].isalpha() or tok[:1] == b"_":
                tok = namer.hip(tok.decode()).encode()
            out.append(tok)
        return out


@lru_cache(maxsize=256)
def _parsed(data: bytes):
    """Words, tree and definitions of a header's content (headers are shared by many files)."""
    tree = parsing.parse("cuda", data)
    return frozenset(_WORD.findall(data)), tree, definitions(tree, data)


_WORD = LazyRegex(rb"[A-Za-z_]\w*")


@rule_kind("rename-collision")
class RenameCollisionRule(CompiledRule):
    whole_file = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.data = load(settings.library_profile)
        self.rename = renamer(settings)
        self.namer = Namer(self.data, self.rename)
        # the spellings that can take part (CUDA and HIP names of the collision classes)
        self.words = frozenset(w.encode() for w in (*self.data.cuda, *self.data.hip))
        self.classes = set(self.data.classes)
        self.amd = amd(settings.target_rocm)

    def applies_to_fragments(self) -> bool:
        return False

    def run_file(self, ctx):
        data = ctx.data
        if self.words.isdisjoint(file_words(ctx)):
            return
        here = file_definitions(ctx)
        if not here:
            return
        headers = self._included(ctx)
        # only names defined twice can collide: most files define each name once
        count: dict[str, int] = {}
        for d in here:
            count[d.name] = count.get(d.name, 0) + 1
        for _, _, defs in headers:
            for d in defs:
                if d.name in count:
                    count[d.name] += 1
        twice = {k for k, n in count.items() if n > 1}
        if not twice:
            return
        found = []
        for path, text, defs in headers:
            found += [_Def(f, text, path, self.namer, self.rename)
                      for f in describe(defs, text, self.amd, twice.__contains__) if self._counts(f)]
        found += [_Def(f, data, ctx.path, self.namer, self.rename)
                  for f in describe(here, data, self.amd, twice.__contains__) if self._counts(f)]
        seen: dict[tuple, list[_Def]] = {}
        for d in found:
            seen.setdefault(d.hip, []).append(d)
        for group in seen.values():
            if len(group) > 1:
                self._group(ctx, group)

    @staticmethod
    def _counts(f: Function) -> bool:
        return bool(f.params) and not f.dead_on_amd()

    def _included(self, ctx) -> list[tuple[str, bytes, list]]:
        from ...lang.cxx.includes import included_headers

        out = []
        for header, text in included_headers(ctx.path, ctx.data, ctx.settings.root):
            words, _, defs = _parsed(text)
            if not self.words.isdisjoint(words):
                out.append((header, text, defs))
        return out

    def _group(self, ctx, group: list[_Def]) -> None:
        first = group[0]
        for later in group[1:]:
            if later.path != ctx.path or exclusive(first.fn, later.fn) or not overlap(first.fn, later.fn):
                continue
            why = self._why(first, later)
            if why is None:
                continue
            self._report(ctx, first, later, why)

    def _why(self, a: _Def, b: _Def) -> str | None:
        """Why the two are one function in HIP and not in CUDA; None where renaming is not the cause."""
        hip = a.hip[-1]
        if a.renamed or b.renamed:
            if a.cuda == b.cuda:
                return None  # one function in CUDA already: kept apart by conditions this rule cannot read
            return "; ".join(self._differ(x, y, h) for x, y, h, cx, cy in
                             zip(a.spelled, b.spelled, hip, a.cuda, b.cuda) if cx != cy)
        # already HIP spellings: one of the types that renaming joins
        if not any(self._joined(t) for t in hip):
            return None
        return "overloads for different CUDA types became one function when their types were renamed"

    def _differ(self, x: str, y: str, hip: str) -> str:
        # a builtin type is a CUDA type too; a HIP name (already renamed) is not
        cuda_x, cuda_y = (any(self.rename(w) for w in re.findall(r"\w+", t)) or _BUILTIN.match(t) is not None
                          for t in (x, y))
        if cuda_x and cuda_y or not (cuda_x or cuda_y):
            return f"`{x}` and `{y}` are different types in CUDA, both `{hip}` in HIP"
        cuda, other = (x, y) if cuda_x else (y, x)
        return f"`{cuda}` becomes `{hip}`, the type of the other definition's `{other}`"

    def _joined(self, spelling: str) -> bool:
        return any(spelling == c or spelling.startswith(c + " ") for c in self.classes)

    def _report(self, ctx, first: _Def, later: _Def, why: str) -> None:
        sig = f"{later.fn.name}({', '.join(later.hip[-1])})"
        same = first.shape(self.namer) == later.shape(self.namer)
        where = first.where(ctx.path)
        span = line_span(ctx.data, definition_node(later.fn))
        edits = applicability = None
        if same:
            tail = f"the two definitions are the same once renamed: the one at {where} is kept"
        else:
            tail = (f"the definitions differ: keep one (guarding this one makes calls for both types reach the "
                    f"one at {where})")
        if span is not None:
            start, end = span
            after = "#endif\n" if ctx.data[end - 1:end] == b"\n" else "\n#endif\n"
            edits = [Edit(start, start, f"{GUARD}  // cuda2hip: repeats {sig} in HIP\n"), Edit(end, end, after)]
            applicability = "safe" if same else "unsafe"
        name = later.fn.name_node
        ctx.report(self, name.start_byte, name.end_byte, self.message(SIGNATURE=sig, REASON=f"{why}; {tail}"),
                   edits=edits, applicability=applicability, description="Guard the repeated definition out of HIP builds")
        if first.path == ctx.path:
            node = first.fn.name_node
            ctx.report(self, node.start_byte, node.end_byte,
                       self.message(SIGNATURE=sig, REASON=f"{why}; it is defined again at line {later.line()}"))
