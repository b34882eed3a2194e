"""Name-table rule kinds: `rename` (CUDA name -> HIP name) and `unmapped` (CUDA names without a
HIP equivalent in the chosen ROCm version / library profile), and what a CUDA name becomes under
a run's settings (`resolve`). All name-table rules of a file are merged into one visitor
(engine/name_tables.py), which hands each of them the identifiers its table knows.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ...api.tables import ApiEntry, as_entry, resolve_tables, successor, table_rows, version_tuple
from ...engine.compiled import CompiledRule, RuleCompileError, rule_kind
from ...engine.name_tables import combine_name_tables
from ...findings import API, Edit
from ...lang.cxx.definitions import file_definitions
from ...lang.cxx.syntax import IDENTIFIER_KINDS

# Names in NVIDIA's API name spaces: cuda*, cu[A-Z]* (driver, cuComplex, cuFile), CU*/CUDA_*
# (driver types and macros), the math-library prefixes, nvrtc, __nv_*/__CUDA* and CUB's, and
# cuda_bf16.h's typedefs nv_bfloat16 / nv_bfloat162.
CUDA_LOOKING = re.compile(
    rb"(?:cuda[A-Z0-9_]|cu[A-Z]|CU[A-Za-z_]|Cuda[A-Z]|nvrtc|NVRTC_|NVFFT_|"
    rb"cublas|curand|cufft|cusparse|cusolver|cudnn|cufile|cub[A-Z]|Cub[A-Z]|_Cub|_CUB|"
    rb"__cuda|__CUDA|__CUB|__nv_|__NV_|nv_bfloat16)"
)

# Library names as users know them, for messages.
HIP_LIBRARY = {"runtime": "HIP", "driver": "HIP", "device": "HIP", "complex": "HIP", "rtc": "hipRTC",
               "cublas": "hipBLAS", "cublaslt": "hipBLASLt", "curand": "hipRAND", "cufft": "hipFFT", "cusparse": "hipSPARSE",
               "cusolver": "hipSOLVER", "cudnn": "hipDNN", "cub": "hipCUB"}
ROC_LIBRARY = {"cublas": "rocBLAS", "curand": "rocRAND", "cusparse": "rocSPARSE",
               "cusolver": "rocSOLVER", "cudnn": "MIOpen"}
# HIPIFY's hip-side target for cuDNN is hipDNN, for which the tables give no ROCm release.
NO_ROCM_RELEASE = frozenset({"cudnn"})
# Libraries with a legacy API whose functions share the current API's names (legacy_api.py).
LEGACY_LIBRARIES = frozenset({"cublas"})
# Targets that are plain C/C++ (e.g. `cusolver_int_t` -> `int`): in every ROCm version.
_PLAIN_C = re.compile(r"(?:void|int|char|float|double|long|short|unsigned|size_t)\b[\w\s*]*$")


class Resolution(NamedTuple):  # (a NamedTuple: a frozen dataclass costs every run ~0.4 ms to create)
    """What a CUDA name becomes under the run's settings."""

    target: str | None  # name to write, or None when it cannot be renamed
    reason: str  # why not (target None)
    label: str  # library of the target (hipBLAS, rocBLAS, ...)


def resolve_for(entry: ApiEntry, settings) -> Resolution:
    """What `entry` becomes under the run's settings (its target release, profile, --experimental)."""
    return resolve(entry, settings.library_profile, version_tuple(settings.target_rocm), settings.target_rocm,
                   settings.experimental)


def resolve(entry: ApiEntry, profile: str, target_rocm: tuple[int, ...] | None, rocm_text: str,
            experimental: bool) -> Resolution:
    """What `entry` becomes for `profile` at the release `target_rocm` (`rocm_text` as the user wrote
    it). A run always has a target; None (no version gating: every name some release has, as long as
    none removed it) is only for the tools that generate data from the tables."""
    lib = entry.library
    roc = profile == "roc" and lib in ROC_LIBRARY
    if roc:
        name, added, removed, exp = entry.roc, entry.roc_added, entry.roc_removed, entry.roc_experimental
        label = ROC_LIBRARY[lib]
    else:
        name, added, removed, exp = entry.hip, entry.hip_added, entry.hip_removed, entry.experimental
        label = HIP_LIBRARY.get(lib, "HIP")
    if name is None:
        audited = _audit_reason(entry.note, "roc" if roc else "hip")
        if audited:
            return Resolution(None, audited, label)
        reason = f"no {label} equivalent"
        if roc and entry.hip:
            reason += f" ({HIP_LIBRARY[lib]} has `{entry.hip}`: drop --roc to use it)"
        elif not roc and lib in ROC_LIBRARY and entry.roc:
            reason += f" ({ROC_LIBRARY[lib]} has `{entry.roc}`: use --roc)"
        return Resolution(None, reason, label)
    if not roc and lib in NO_ROCM_RELEASE:
        reason = f"HIPIFY's {label} name `{name}` has no ROCm release"
        if entry.roc:
            reason += f"; {ROC_LIBRARY[lib]} has `{entry.roc}` (use --roc)"
        return Resolution(None, reason, label)
    if exp and not experimental:
        return Resolution(None, f"{label}'s `{name}` is experimental (enable with --experimental)", label)
    renamed = successor(name, target_rocm)
    if renamed is not None:
        return Resolution(renamed, "", label)  # a later release's name for it (hipBLAS 3)
    plain = bool(_PLAIN_C.match(name))
    if target_rocm is not None and not plain:
        # (a rule's own `names:` without `hip_added` are vouched for by the rule: every release)
        if not added and entry.section:
            return Resolution(None, f"the tables give no ROCm version for {label}'s `{name}`, so it is not "
                                    f"known to exist in ROCm {rocm_text}", label)
        if version_tuple(added) > target_rocm:
            return Resolution(None, f"{label}'s `{name}` needs ROCm {added} (target is {rocm_text})", label)
        if removed and version_tuple(removed) <= target_rocm:
            return Resolution(None, f"{label}'s `{name}` was removed in ROCm {removed}", label)
    elif removed and not plain:
        return Resolution(None, f"{label}'s `{name}` was removed in ROCm {removed}", label)
    return Resolution(name, "", label)


def _audit_reason(note: str, profile: str) -> str:
    """Why the table audit (tools/audit_rule_data.py) dropped a target, from the row's note."""
    if "header audit" not in note:
        return ""
    for part in note.split("; "):
        if part.startswith(f"header audit, {profile}: ") and part.endswith(", so it is not written"):
            return part.split(": ", 1)[1].removesuffix(", so it is not written") + " (cuda2hip's table audit)"
    return ""


class _TableRule(CompiledRule):
    kinds = IDENTIFIER_KINDS
    wants_tokens = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if not rule.tables and not rule.names:
            raise RuleCompileError("field `tables`: a rename rule needs `tables` or `names`")
        # name -> ApiEntry, or its undecoded row until first met (see `entry`)
        self.entries: dict = {}
        for path in resolve_tables(rule.source_path, rule.tables or []):
            self.entries.update(table_rows(path))
        params = rule.params or {}
        kind = params.get("names_kind", "name")
        for cuda, hip in (rule.names or {}).items():
            self.entries[cuda.encode()] = ApiEntry.inline(cuda, hip, kind, params.get("library", "user"),
                                                          str(params.get("hip_added", "")))
        self.target = version_tuple(settings.target_rocm)
        self._resolved: dict[str, Resolution] = {}

    combine = classmethod(combine_name_tables)

    def applies_to_fragments(self) -> bool:
        # Macro bodies are covered token by token (see NameTables.token), which also works where
        # the body is not a complete statement; the fragment tree would see the same names twice.
        return False

    def resolution(self, entry: ApiEntry) -> Resolution:
        res = self._resolved.get(entry.cuda)
        if res is None:
            s = self.settings
            res = self._resolved[entry.cuda] = resolve(entry, s.library_profile, self.target,
                                                       s.target_rocm, s.experimental)
        return res

    def entry(self, name: bytes) -> ApiEntry | None:
        entry = self.entries.get(name)
        if entry is not None and type(entry) is not ApiEntry:
            entry = self.entries[name] = as_entry(entry)
        return entry

    def visit(self, node, ctx):  # used when a rule runs alone (NameTables normally dispatches)
        start, end = node.start_byte, node.end_byte
        entry = self.entry(ctx.data[start:end])
        if entry is not None:
            self.check(entry, start, end, ctx, node)

    def token(self, start, end, name, ctx):
        entry = self.entry(name)
        if entry is not None:
            self.check(entry, start, end, ctx, None)

    def check(self, entry: ApiEntry, start: int, end: int, ctx, node) -> None:
        raise NotImplementedError


def claimed(entry, ctx) -> bool:
    from .legacy_api import claimed as legacy_claimed  # only for the few libraries with one

    return legacy_claimed(entry, ctx)


def is_namespace_use(ctx, node, start: int, end: int) -> bool:
    """`cub` as a namespace (`cub::X`, `using namespace cub`), not a variable named cub."""
    if node is not None:
        if node.type == "namespace_identifier":
            return True
        parent = node.parent  # `using namespace cub;` parses as a using_declaration
        return parent is not None and parent.type == "using_declaration" and any(
            c.type == "namespace" for c in parent.children)
    rest = ctx.data[end:end + 3].lstrip()
    return rest.startswith(b"::") or ctx.data[max(0, start - 16):start].rstrip().endswith(b"namespace")


def is_call_of_undefined(ctx, node, start: int, end: int) -> bool:
    """For generic-looking names (`umax`, `saturate`): a call, of a function the file does not
    define itself (a project's own `umax` is not CUDA's)."""
    name = ctx.data[start:end]
    if name in file_definitions(ctx):
        return False
    if node is None:
        return ctx.data[end:end + 64].lstrip().startswith(b"(")
    parent = node.parent
    return parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node


def _defined_by_project(ctx, name: bytes) -> bool:
    """The file, or a project header it includes, defines `name`."""
    from ...lang.cxx.includes import included_definitions_of

    return name in file_definitions(ctx) or name in included_definitions_of(ctx)


@rule_kind("rename")
class RenameRule(_TableRule):
    """Report CUDA names with a HIP equivalent and rename them."""

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        # e.g. cuDNN -> MIOpen: the function signatures differ, enum and type names do not.
        params = rule.params or {}
        self.unsafe_kinds = frozenset(params.get("unsafe_kinds", ()))
        self._messages: dict[str, str] = {}
        self._shared: dict[str, tuple[str, dict]] = {}
        self.roc = settings.library_profile == "roc"
        if self.roc:
            # roc* libraries are not drop-in: other handle types, some other parameters.
            self.unsafe_kinds |= frozenset(params.get("roc_unsafe_kinds", ()))
        # Verdicts on function renames from the real headers (see match/signatures.py).
        self.signatures = None
        if params.get("signatures"):
            import os

            path = os.path.join(os.path.dirname(rule.source_path),
                                params["signatures"].format(profile=settings.library_profile))
            if not os.path.isfile(path):
                raise RuleCompileError(f"params.signatures: {path} not found")
            # the verdicts against the target release's own headers, where they were generated
            stem, ext = os.path.splitext(path)
            at_target = f"{stem}-{settings.target_rocm}{ext}"
            self.signatures = at_target if settings.target_rocm and os.path.isfile(at_target) else path
        # Enumerators mapped by the function they are passed to (enum_arguments.py)
        self.by_parameter = []
        if params.get("by_parameter"):
            from . import enum_arguments

            self.by_parameter = enum_arguments.load(rule.source_path, params["by_parameter"],
                                                    settings.library_profile)

    def check(self, entry, start, end, ctx, node):
        if entry.kind == "namespace" and not is_namespace_use(ctx, node, start, end):
            return
        res = self.resolution(entry)
        if res.target is None or res.target == entry.cuda:
            return
        if entry.library in LEGACY_LIBRARIES and claimed(entry, ctx):
            return  # a legacy cuBLAS call: same name, other parameters (legacy_api.py)
        mapped = None
        if self.by_parameter and entry.kind != "function":
            from .enum_arguments import mapped as by_parameter

            mapped = by_parameter(self.by_parameter, entry.cuda, ctx.data, start, end)
        if mapped is not None:
            hip, library = mapped
            msg = self.message(NAME=entry.cuda, HIP=hip, SECTION=entry.section, LIBRARY=library)
            ctx.report(self, start, end, f"{msg} (passed to a {library} function, which takes {library}'s enum)",
                       edits=[Edit(start, end, hip)], description=f"Rename to `{hip}`",
                       data={"library": entry.library, "hip": hip, API: entry.cuda})
            return
        msg = self._messages.get(entry.cuda)
        if msg is None:  # the same for every occurrence of the name
            msg = self._messages[entry.cuda] = self.message(NAME=entry.cuda, HIP=res.target, SECTION=entry.section,
                                                            LIBRARY=res.label)
        app = "unsafe" if entry.kind in self.unsafe_kinds else None
        edits = [Edit(start, end, res.target)]
        if entry.kind == "function" and self.signatures is not None:
            app, msg = self._signature(entry, res, node, ctx, edits, app, msg)
        # The description and data are the same for every occurrence of a name: one object each
        # (findings never change their data in place), not one per finding of a huge file.
        shared = self._shared.get(entry.cuda)
        if shared is None:
            shared = self._shared[entry.cuda] = (f"Rename to `{res.target}`",
                                                 {"library": entry.library, "hip": res.target, API: entry.cuda})
        ctx.report(self, start, end, msg, edits=edits, applicability=app, description=shared[0], data=shared[1])

    def _signature(self, entry, res, node, ctx, edits, app, msg):
        """Applicability and message of a function rename from its verdict; the argument casts
        a `cast` verdict needs are added to `edits`."""
        from ...api import signatures

        found = signatures.verdict(self.signatures, entry.cuda, res.target)
        if found is None:
            return app, msg
        checked = signatures.checked_against(self.signatures, res.label)
        if found.verdict == "same":
            return "safe", msg
        if found.verdict == "cast":
            types = sorted(set(found.detail.values()))
            args = signatures.call_arguments(node)
            casts = signatures.cast_edits(args, found.detail, ctx.path.endswith((".c", ".h"))) if args else None
            spelled = ", ".join(f"`{t.replace(' *', '*')}`" for t in types)
            if casts is None:
                return "unsafe", (f"{msg}; its arguments {_positions(found.detail)} must be converted to {spelled} "
                                  f"(same layout, {checked}); only a direct call gets the conversions")
            edits.extend(casts)
            return "safe", f"{msg}; arguments {_positions(found.detail)} converted to {spelled} (same layout, {checked})"
        if found.verdict == "differs":
            from .enum_arguments import arguments_fit

            if self.by_parameter and arguments_fit(self.by_parameter, entry.cuda, found.detail, ctx.data, edits[0].end):
                return "safe", f"{msg}; its enum arguments become {res.label}'s"
            return "unsafe", f"{msg}; not a drop-in replacement ({checked}): {found.detail}"
        # unchecked: the rule's default, and the reason where it is not a safe fix
        return app, (f"{msg}; signature not compared ({found.detail})" if app == "unsafe" else msg)


def _positions(casts: dict) -> str:
    return ", ".join(str(int(i) + 1) for i in sorted(casts, key=int))


@rule_kind("unmapped")
class UnmappedRule(_TableRule):
    """Report CUDA names that have no HIP equivalent (or none in the targeted ROCm version)."""

    def check(self, entry, start, end, ctx, node):
        res = self.resolution(entry)
        if res.target is not None:
            return
        if not CUDA_LOOKING.match(entry.cuda.encode()) and not is_call_of_undefined(ctx, node, start, end):
            return
        if entry.library == "device" and _defined_by_project(ctx, entry.cuda.encode()):
            return  # a device function the project defines itself (HIP133's fix writes `__vsub4` so)
        if entry.library in LEGACY_LIBRARIES and claimed(entry, ctx):
            return  # reported as legacy API (legacy_api.py)
        msg = self.message(NAME=entry.cuda, REASON=res.reason, SECTION=entry.section, LIBRARY=entry.library)
        ctx.report(self, start, end, msg, data={"reason": res.reason, "library": entry.library, API: entry.cuda})
