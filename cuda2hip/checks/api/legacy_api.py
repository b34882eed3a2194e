"""Legacy library APIs: the same function names as the current API, other parameters.

cuBLAS's legacy API (`cublas.h`) declares `void cublasSscal(int n, float alpha, float* x, int
incx)`; the v2 API (`cublas_v2.h`) #defines `cublasSscal` to `cublasSscal_v2(cublasHandle_t
handle, int n, const float* alpha, float* x, int incx)`. hipBLAS follows the v2 API
(`hipblasSscal(hipblasHandle_t handle, int n, const float* alpha, float* x, int incx)` in
hipblas.h), so renaming a legacy call gives code that does not compile, or calls with the
arguments shifted. The two headers exclude each other (cublas.h: `#error "It is an error to
include both cublas.h and cublas_v2.h"`).

A file uses the legacy API when it includes `cublas.h`, itself or through a local header, and
not `cublas_v2.h`. There, the functions of the legacy API (rules/api/legacy/cublas.json,
generated from cublas.h) belong to the `legacy-api` rule (HIP123: reported, never renamed): the
name-table rules leave them alone (`claimed`), and the include of `cublas.h` stays while the
file uses such a function (`keeps_include`), so a later pass of the fix loop still sees a
legacy file.
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec
from msgspec import Struct

from ...engine.compiled import CompiledRule, rule_kind
from ...findings import API
from ...lang.cxx.syntax import IDENTIFIER_KINDS
from ...lang.lazy_regex import LazyRegex

DATA_FILES = ("api/legacy/cublas.json",)  # relative to the built-in rules directory


class LegacyApi(Struct, frozen=True):
    library: str
    header: str
    current_header: str
    functions: frozenset[bytes]
    include: re.Pattern
    current_include: re.Pattern


def _include_pattern(header: str) -> re.Pattern:
    return re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]' + re.escape(header.encode()) + rb'[>"]', re.MULTILINE)


@lru_cache(maxsize=1)
def legacy_apis() -> dict[str, LegacyApi]:
    """Library -> its legacy API."""
    from ...rulebook.loader import builtin_rules_dir

    out = {}
    for rel in DATA_FILES:
        data = msgspec.json.decode((builtin_rules_dir() / rel).read_bytes())
        out[data["library"]] = LegacyApi(
            data["library"], data["header"], data["current_header"],
            frozenset(n.encode() for n in data["functions"]),
            _include_pattern(data["header"]), _include_pattern(data["current_header"]))
    return out


def uses_legacy(ctx, api: LegacyApi) -> bool:
    """Whether the file of `ctx` includes the legacy header (itself or through a local header)
    and not the current one."""
    root = ctx.file_context
    key = ("_legacy_api", api.library)
    got = root.cache.get(key)
    if got is None:
        data = root.source.data
        legacy = api.include.search(data) is not None
        current = api.current_include.search(data) is not None
        if not legacy and not current and api.library.encode() in data:
            from ...lang.cxx.includes import includes_reaching

            legacy = includes_reaching(root.path, data, root.settings.root, api.include.search)
            if legacy:
                current = includes_reaching(root.path, data, root.settings.root, api.current_include.search)
        got = root.cache[key] = legacy and not current
    return got


def claimed(entry, ctx) -> bool:
    """Whether the name of `entry` (a table row) is a legacy function in this file: then only the
    `legacy-api` rule reports it."""
    api = legacy_apis().get(entry.library)
    return api is not None and entry.cuda.encode() in api.functions and uses_legacy(ctx, api)


_WORD = LazyRegex(rb"[A-Za-z_]\w*")


def keeps_include(header: str, ctx) -> bool:
    """Whether the include of `header` must stay: it is a legacy header and the file uses its
    functions (anywhere in its text: keeping it is never wrong, only unfinished)."""
    for api in legacy_apis().values():
        if header == api.header and uses_legacy(ctx, api):
            data = ctx.file_context.source.data
            return any(w in api.functions for w in set(_WORD.findall(data)))
    return False


@rule_kind("legacy-api")
class LegacyApiRule(CompiledRule):
    """Report the functions of a legacy API in files that use it, and their include."""

    kinds = IDENTIFIER_KINDS
    wants_tokens = True
    by_text = True
    whole_file = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        library = (rule.params or {}).get("library", "cublas")
        self.api = legacy_apis()[library]
        self.literals = (library,)

    def applies_to_fragments(self) -> bool:
        return False  # macro bodies come token by token

    def wanted_texts(self, words: set[bytes]) -> set[bytes]:
        return words & self.api.functions

    def visit(self, node, ctx):
        self._report(node.start_byte, node.end_byte, ctx)

    def token(self, start, end, name, ctx):
        if name in self.api.functions:
            self._report(start, end, ctx)

    def _report(self, start, end, ctx):
        if uses_legacy(ctx, self.api):
            name = ctx.data[start:end].decode()
            ctx.report(self, start, end, self.message(NAME=name, HEADER=self.api.header,
                                                      CURRENT=self.api.current_header), data={API: name})

    def run_file(self, ctx):
        """The include of the legacy header, which stays while the file uses the legacy API."""
        data = ctx.data
        if self.api.header.encode() not in data or not uses_legacy(ctx, self.api):
            return
        if not keeps_include(self.api.header, ctx):
            return  # no legacy function used: the include rule migrates the header
        text = (self.rule.params or {}).get("include_message", "")
        for key, value in (("$HEADER", self.api.header), ("$CURRENT", self.api.current_header)):
            text = text.replace(key, value)
        for m in self.api.include.finditer(data):
            start = m.start() + len(m.group(0)) - len(m.group(0).lstrip(b" \t"))
            ctx.report(self, start, m.end(), text)
