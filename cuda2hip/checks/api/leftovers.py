"""No silent leftovers: rule kinds that report CUDA names the rename rules cannot handle.

- `unknown-cuda-name`: CUDA-looking identifiers (cuda*, cu[A-Z]*, CU*, cublas*, ...) that are in
  no name table (the table rules report the names they know: renamed, or "no HIP equivalent").
- `cuda-name-in-string`: CUDA names inside string literals (reported, never rewritten).
- `unknown-cuda-header`: includes of CUDA headers that no include rule maps.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...api.tables import ApiEntry, all_table_paths, as_entry, table_rows
from ...engine.compiled import CompiledRule, rule_kind
from ...engine.name_tables import combine_name_tables
from ...findings import API, Severity
from ...lang.cxx.definitions import file_definitions
from ...lang.cxx.includes import included_definitions_of
from ...lang.cxx.syntax import IDENTIFIER_KINDS
from ...project.names import DEFINED, UNKNOWN
from .include import include_path, lookup
from .rename import CUDA_LOOKING, is_namespace_use


@lru_cache(maxsize=1)
def all_table_entries() -> "dict[bytes, ApiEntry | bytes]":
    """Every CUDA name of the built-in tables (whatever rules a run selects), with its row of the
    first table that has it (decode a row with `as_entry`)."""
    out: dict = {}
    for path in reversed(all_table_paths()):
        out.update(table_rows(path))
    return out


def _outermost(ctx, node, start: int) -> bool:
    """`cuda::std::...`, not a project's or library's own nested namespace (`at::cuda::...`)."""
    if node is None:
        return not ctx.data[max(0, start - 8):start].rstrip().endswith(b"::")
    parent = node.parent
    if parent is not None and parent.type == "qualified_identifier":
        grand = parent.parent
        if grand is not None and grand.type == "qualified_identifier" and grand.child_by_field_name("name") == parent:
            return False
    return True


@rule_kind("unknown-cuda-name")
class UnknownNameRule(CompiledRule):
    """Merged into NameTables, which calls `miss` for the names none of its tables matched."""

    kinds = IDENTIFIER_KINDS
    wants_tokens = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.known = all_table_entries()

    combine = classmethod(combine_name_tables)

    def applies_to_fragments(self) -> bool:
        return False

    def visit(self, node, ctx):
        self.miss(ctx.data[node.start_byte:node.end_byte], node.start_byte, node.end_byte, ctx, node)

    def token(self, start, end, name, ctx):
        self.miss(name, start, end, ctx, None)

    def may_report(self, name: bytes) -> bool:
        """Whether `miss` can report this name at all (what it returns on first)."""
        return name not in self.known and (name == b"cuda" or CUDA_LOOKING.match(name) is not None)

    def reportable(self, words: set[bytes]) -> set[bytes]:
        """The words `may_report` keeps (the table look-ups in one set operation)."""
        match = CUDA_LOOKING.match
        return {w for w in words.difference(self.known) if w == b"cuda" or match(w) is not None}

    def miss(self, name: bytes, start: int, end: int, ctx, node) -> None:
        if name in self.known:
            return
        if not CUDA_LOOKING.match(name):
            if name == b"cuda" and is_namespace_use(ctx, node, start, end) and _outermost(ctx, node, start):
                self._report(ctx, start, end, name, "the `cuda::` namespace (libcu++ and CUDA C++ APIs) is "
                             "in no CUDA -> HIP table; port these uses by hand")
            return
        text = name.decode("utf-8", "replace")
        if text in ctx.options(self).get("ignore_names", ()):
            return
        defs = file_definitions(ctx)
        if name in defs:
            if defs[name] == ctx.base + start:
                self._report(ctx, start, end, name, "a name this project defines that looks like a CUDA "
                             "name; it is not renamed", severity=Severity.INFO, key=DEFINED)
            return
        if name in included_definitions_of(ctx):
            return
        # (dropped by the run where another file of it defines the name: project_names.py)
        self._report(ctx, start, end, name, "an unknown CUDA name: in none of the CUDA -> HIP tables "
                     "(HIPIFY's, CUDA 12.6 / ROCm 6.3); port it by hand", key=UNKNOWN)

    def _report(self, ctx, start, end, name, reason, severity=None, key=None):
        text = name.decode("utf-8", "replace")
        data = {"reason": reason}
        if key is not None:
            data[key] = text
        if key == UNKNOWN:
            data[API] = text
        ctx.report(self, start, end, self.message(NAME=text, REASON=reason), severity=severity, data=data)


_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# Library names in prose ("CUDA error: %s") are no API names.
_PROSE = frozenset({b"CUDA", b"Cuda", b"CUBLAS", b"CURAND", b"CUFFT", b"CUSPARSE", b"CUSOLVER", b"CUDNN",
                    b"NVRTC", b"CUDART"})
_STRING_KINDS = frozenset({"string_literal", "raw_string_literal", "concatenated_string"})


@rule_kind("cuda-name-in-string")
class StringNamesRule(CompiledRule):
    """CUDA names in string literals: reported so that messages, dlsym() names, environment
    variables and generated code get a look; never rewritten (a string may have to keep them)."""

    kinds = frozenset({"string_literal", "raw_string_literal"})

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.known = all_table_entries()

    def visit(self, node, ctx):
        parent = node.parent
        if parent is not None and parent.type in ("preproc_include", "linkage_specification"):
            return
        data = ctx.data
        for part in node.named_children:
            if part.type in ("string_content", "raw_string_content"):
                self._scan(data, part.start_byte, part.end_byte, ctx)

    def _scan(self, data: bytes, start: int, end: int, ctx) -> None:
        for m in _WORD.finditer(data, start, end):
            word = m.group()
            if not CUDA_LOOKING.match(word) or word in _PROSE:
                continue
            entry = self.known.get(word)
            if entry is not None:
                entry = as_entry(entry)
            hint = f" (HIP: `{entry.hip}`)" if entry is not None and entry.hip and entry.hip != entry.cuda else ""
            ctx.report(self, m.start(), m.end(), self.message(NAME=word.decode(), HINT=hint))


_CUDA_HEADER = re.compile(
    r"(?:cuda\w*\.h(?:pp)?|cu[A-Z]\w*\.h|(?:cublas|curand|cufft|cusparse|cusolver|cudnn|cufile|nvrtc|npp|"
    r"nvToolsExt|nvml|cupti)\w*\.h|(?:cub|cuda|nvtx3|nv|crt|cooperative_groups|thrust/system/cuda)/.*|"
    r"sm_\d+_\w+\.h(?:pp)?|device_\w+\.h(?:pp)?|math_constants\.h|mma\.h|builtin_types\.h|host_defines\.h|"
    r"vector_functions\.h(?:pp)?|texture_fetch_functions\.h|surface_functions\.h|nvfunctional)$"
)


@lru_cache(maxsize=4)
def _header_maps(profile: str) -> tuple[dict, dict]:
    """(map of this profile, map of the other profile) over every built-in include rule."""
    from ...rulebook.loader import RuleSource, builtin_rules_dir, load_rules

    mine: dict[str, str | None] = {}
    other: dict[str, str | None] = {}
    for r in load_rules([RuleSource(builtin_rules_dir(), builtin=True)], use_cache=True):
        if r.kind != "include" or not r.headers:
            continue
        roc = (r.params or {}).get("roc") or {}
        base = dict(r.headers)
        with_roc = {**base, **roc}
        mine.update(with_roc if profile == "roc" else base)
        other.update(base if profile == "roc" else with_roc)
    return mine, other


@rule_kind("unknown-cuda-header")
class UnknownHeaderRule(CompiledRule):
    kinds = frozenset({"preproc_include"})

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.mine, self.other = _header_maps(settings.library_profile)

    def visit(self, node, ctx):
        info = include_path(node, ctx)
        if info is None:
            return
        header, open_d, _close, pstart, pend = info
        if not _CUDA_HEADER.match(header) or lookup(self.mine, header)[0]:
            return
        if open_d == '"':
            from pathlib import Path

            from ...lang.cxx.includes import resolve

            root = ctx.settings.root.resolve()
            if resolve(header, Path(ctx.path).resolve().parent, root) is not None:
                return  # a project header that happens to have a CUDA-like name
        known, target = lookup(self.other, header)
        if known and target:
            flag = "without --roc" if self.settings.library_profile == "roc" else "with --roc"
            reason = f"its counterpart `{target}` is used {flag}"
        else:
            reason = "no HIP counterpart is known"
        ctx.report(self, pstart, pend, self.message(HEADER=header, REASON=reason), data={"reason": reason, API: header})
