"""`include` rule kind: header maps (`<cuda_runtime.h>` -> `<hip/hip_runtime.h>`).

An include whose target is already included in the same preprocessor branch is removed instead
of duplicated; includes in different `#if` branches are independent (each branch must still
include what it needs).
"""

from __future__ import annotations

from ...engine.compiled import CompiledRule, RuleCompileError, rule_kind
from ...findings import Edit

# Headers of a legacy API (legacy_api.py), kept while the file calls it.
LEGACY_HEADERS = frozenset({"cublas.h"})


def include_path(node, ctx) -> tuple[str, str, str, int, int] | None:
    """(header, opening delimiter, closing delimiter, start, end) of a preproc_include."""
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return None
    text = ctx.node_text(path)
    if len(text) < 2:
        return None
    return text[1:-1], text[0], text[-1], path.start_byte, path.end_byte


def lookup(mapping: dict[str, str | None], header: str) -> tuple[bool, str | None]:
    """(known, target) of a header in a map whose keys may end in `/*` (every header below)."""
    if header in mapping:
        return True, mapping[header]
    cut = header.rfind("/")
    while cut > 0:
        key = header[:cut] + "/*"
        if key in mapping:
            return True, mapping[key]
        cut = header.rfind("/", 0, cut)
    return False, None


def seen_before(parent, ctx, resolve) -> dict[int, frozenset[str]]:
    """For each include among `parent`'s direct children: the headers earlier includes of the
    same parent resolve to after migration (one pass, so large files stay linear)."""
    out = {}
    seen: set[str] = set()
    for child in parent.named_children:
        if child.type != "preproc_include":
            continue
        info = include_path(child, ctx)
        if info is None:
            continue
        out[child.id] = frozenset(seen)
        target = resolve(info[0])
        if target:
            seen.add(target)
    return out


def _version_guarded(node, ctx) -> bool:
    """An include inside an `#if` that tests the HIP/ROCm version or `__has_include`: the
    project already chose where it applies."""
    from ...lang.cxx.preprocessor.conditions import names, parse
    from ...lang.cxx.preprocessor.directives import branch_tests, test_text

    for branch, _ in branch_tests(ctx.tree, node.start_byte):
        text = test_text(branch, ctx.data)
        if any(n.startswith(("HIP_VERSION", "ROCM_VERSION")) or n == "__has_include"
               for n in names(parse(text) if text is not None else None)):
            return True
    return False


@rule_kind("include")
class IncludeRule(CompiledRule):
    kinds = frozenset({"preproc_include"})

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if not rule.headers:
            raise RuleCompileError("field `headers`: an include rule needs a header map")
        self.headers = dict(rule.headers)
        # `params: {roc: {header: target}}`: where the roc* profile (--roc) includes other headers.
        roc = (rule.params or {}).get("roc") or {}
        if settings.library_profile == "roc":
            self.headers.update(roc)
        # `params: {requires: {header: "X.Y"}}`: the ROCm release that first installs a target
        # header. At an older target release the include is reported, not rewritten.
        from ...api.tables import version_tuple

        self.too_new: dict[str, str] = {}
        target = version_tuple(settings.target_rocm)
        for header, version in ((rule.params or {}).get("requires") or {}).items():
            if version_tuple(str(version)) > target:
                self.too_new[header] = str(version)

    def target_of(self, header: str) -> str | None:
        known, target = lookup(self.headers, header)
        return target if known else header

    def visit(self, node, ctx):
        info = include_path(node, ctx)
        if info is None:
            return
        header, open_d, close_d, pstart, pend = info
        known, target = lookup(self.headers, header)
        if not known:
            if header in self.too_new and not _version_guarded(node, ctx):
                # The project's own HIP code includes a header the target's ROCm does not install.
                msg = (f"`{header}` needs ROCm {self.too_new[header]} (target is {self.settings.target_rocm}): "
                       f"the target's HIP does not install it")
                ctx.report(self, pstart, pend, msg, data={"hip": header, "requires": self.too_new[header]})
            return
        if header in LEGACY_HEADERS:
            from .legacy_api import keeps_include

            if keeps_include(header, ctx):
                return  # the file still calls the legacy API: HIP123 reports the include
        start, end = node.start_byte, node.end_byte
        if target is None:
            msg = self.message(HEADER=header, HIP="(none)")
            ctx.report(self, start, end, msg, edits=[Edit(start, end, "")],
                       description=f"Remove the include of `{header}`")
            return
        if target in self.too_new:
            msg = (f"`{header}` is a CUDA header; HIP's `{target}` needs ROCm {self.too_new[target]} "
                   f"(target is {self.settings.target_rocm}): not rewritten")
            ctx.report(self, pstart, pend, msg, data={"hip": target, "requires": self.too_new[target]})
            return
        msg = self.message(HEADER=header, HIP=target)
        if self._already_included(node, target, ctx):
            ctx.report(self, start, end, msg, edits=[Edit(start, end, "")],
                       description=f"Remove: `{target}` is already included")
        else:
            ctx.report(self, pstart, pend, msg, edits=[Edit(pstart, pend, f"{open_d}{target}{close_d}")],
                       description=f"Include `{target}`")

    def _already_included(self, node, target: str, ctx) -> bool:
        parent = node.parent
        if parent is None:
            return False
        key = ("include-targets", self.code, parent.id)
        cache = ctx.cache
        if key not in cache:
            cache[key] = seen_before(parent, ctx, self.target_of)
        return target in cache[key].get(node.id, ())
