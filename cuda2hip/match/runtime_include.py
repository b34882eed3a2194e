"""`hip-runtime-include` rule kind: a file that uses kernels or the runtime API but includes no
runtime header gets `#include <hip/hip_runtime.h>` once.

nvcc includes cuda_runtime.h implicitly, so CUDA sources often include nothing; hipcc does not,
and `threadIdx`, `hipMalloc` and `<<<...>>>` are then undeclared. The include goes after an
include guard or `#pragma once`, else after the file's leading comments.

The same kind adds other headers a CUDA header brought in implicitly (`params`: `header` to add,
`provided_by`: headers whose include provides it, `provided_by_hip_profile`: more of them in the
default library profile only, `kernel_syntax: false` when kernel syntax does not need it): e.g.
cublas_v2.h includes cuComplex.h, while neither hipBLAS's nor rocBLAS's header includes
hip/hip_complex.h.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .. import parse as parsing
from ..findings import Edit
from .api_tables import hip_names, resolve_tables, table_rows
from .compiled import CompiledRule, RuleCompileError, rule_kind

# A file that includes one of these (or a project header that does) has the runtime; the CUDA
# ones are rewritten to the HIP ones by HIP100 in the same run.
_RUNTIME_INCLUDE = re.compile(
    rb'^[ \t]*#[ \t]*include[ \t]*[<"](?:hip/hip_runtime(?:_api)?\.h|cuda_runtime(?:_api)?\.h|cuda\.h)[>"]',
    re.MULTILINE)
_KERNEL_SYNTAX = re.compile(
    rb"__global__|__device__|__shared__|__constant__|__host__|<<<|\b(?:threadIdx|blockIdx|blockDim|gridDim)\b")
_API_NAME = re.compile(rb"\b(?:cuda|hip|cu)[A-Z]\w*")
_NOT_CODE = frozenset({"comment", "string_literal", "string_content", "raw_string_literal", "raw_string_content",
                       "char_literal", "system_lib_string", "escape_sequence"})


@lru_cache(maxsize=8)
def _api_names(paths: tuple[str, ...]) -> frozenset[bytes]:
    """CUDA and HIP spellings of the runtime/driver names (the rule fires before or after renames)."""
    names: set[bytes] = set()
    for path in paths:
        names.update(table_rows(path))
        names.update(hip.encode() for hip in hip_names(path))
    return frozenset(names)


@lru_cache(maxsize=16)
def _include_of(headers: tuple[str, ...]) -> "re.Pattern[bytes]":
    names = b"|".join(re.escape(h.encode()) for h in headers)
    return re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"](?:' + names + rb')[>"]', re.MULTILINE)


@rule_kind("hip-runtime-include")
class RuntimeIncludeRule(CompiledRule):
    whole_file = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if not rule.tables:
            raise RuleCompileError("field `tables`: name tables of the runtime API are needed")
        self.names = _api_names(tuple(resolve_tables(rule.source_path, rule.tables)))
        params = rule.params or {}
        self.header = params.get("header", "hip/hip_runtime.h")
        self.present = _RUNTIME_INCLUDE
        if "provided_by" in params:
            provided = list(params["provided_by"])
            if settings.library_profile == "hip":
                provided += params.get("provided_by_hip_profile", [])
            self.present = _include_of(tuple(provided))
        self.kernel_syntax = params.get("kernel_syntax", True)
        # names that may need the header: the runtime's `cuda*`/`hip*`, or those of the tables
        self._api_name = re.compile(params["names_pattern"].encode()) if "names_pattern" in params else _API_NAME

    def applies_to_fragments(self) -> bool:
        return False

    def run_file(self, ctx):
        if ctx.settings.language_for(Path(ctx.path)) != "cuda":
            # CUDA text embedded in another file (a CuPy/torch kernel string): compiled by
            # hipRTC/torch with its own headers, not by including the runtime header.
            return
        data = ctx.data
        if self.present.search(data):
            return
        use = self._first_use(ctx)
        if use is None:
            return
        from ..include_graph import includes_reaching

        if includes_reaching(ctx.path, data, ctx.settings.root, self._covers):
            return
        start, end, what = use
        pos = self._insertion_point(ctx)
        text = f"#include <{self.header}>\n"
        if pos > 0 and data[pos - 1:pos] != b"\n":
            text = "\n" + text
        ctx.report(self, start, end, self.message(USE=what, HEADER=self.header),
                   edits=[Edit(pos, pos, text)], description=f"Include <{self.header}>")

    @lru_cache(maxsize=64)
    def _covers(self, header: bytes) -> bool:
        """A project header provides the runtime if it includes it, or will get the include
        from this rule in the same run (so the answer does not depend on the order files are
        fixed in)."""
        if self.present.search(header):
            return True
        tree = parsing.parse("cuda", header)
        return self._first_use(_Text(header, tree)) is not None

    def _in_code(self, ctx, start: int, end: int) -> bool:
        node = ctx.tree.root_node.descendant_for_byte_range(start, end)
        while node is not None:
            if node.type in _NOT_CODE:
                return False
            if node.type in ("translation_unit", "compound_statement", "function_definition"):
                return True
            node = node.parent
        return True

    def _first_use(self, ctx) -> tuple[int, int, str] | None:
        data = ctx.data
        for m in _KERNEL_SYNTAX.finditer(data) if self.kernel_syntax else ():
            if self._in_code(ctx, m.start(), m.end()):
                return m.start(), m.end(), m.group().decode()
        for m in self._api_name.finditer(data):
            if m.group() in self.names and self._in_code(ctx, m.start(), m.end()):
                return m.start(), m.end(), m.group().decode()
        return None

    def _insertion_point(self, ctx) -> int:
        """After `#pragma once` or the include guard's #define, else after leading comments."""
        root = ctx.tree.root_node
        children = [c for c in root.children if c.type != "comment"]
        if not children:
            return 0
        first = children[0]
        text = ctx.data
        if first.type == "preproc_call" and b"pragma" in text[first.start_byte:first.end_byte] and \
                b"once" in text[first.start_byte:first.end_byte]:
            return _line_end(text, first.end_byte)
        if first.type == "preproc_ifdef" and text[first.start_byte:first.start_byte + 8].startswith(b"#ifndef"):
            guard = first.child_by_field_name("name")
            for c in first.named_children:
                if c.type == "preproc_def":
                    name = c.child_by_field_name("name")
                    if guard is not None and name is not None and \
                            text[name.start_byte:name.end_byte] == text[guard.start_byte:guard.end_byte]:
                        return _line_end(text, c.end_byte)
                    break
                if c.type != "comment" and c != guard:
                    break
        return _line_start(text, first.start_byte)


class _Text:
    """The part of a FileContext that `_first_use` reads, for a header on disk."""

    def __init__(self, data: bytes, tree):
        self.data, self.tree = data, tree


def _line_end(data: bytes, pos: int) -> int:
    """Offset just after the line holding `pos - 1` (nodes of directives end after their newline)."""
    if pos > 0 and data[pos - 1:pos] == b"\n":
        return pos
    nl = data.find(b"\n", pos)
    return len(data) if nl < 0 else nl + 1


def _line_start(data: bytes, pos: int) -> int:
    return data.rfind(b"\n", 0, pos) + 1
