"""CUDA macros that code tests to find out what it is compiled with: header guards, the macros a
CUDA header defines, compiler and version macros. After migration nothing defines them, so every
`#ifdef __CUDA_RUNTIME_H__` block of a helper header would vanish without a word.

- `cuda-header-guard` (HIP210): a macro a CUDA header defines becomes the guard of the HIP/ROCm
  header the migration includes instead (`__CUDA_RUNTIME_H__` -> `HIP_INCLUDE_HIP_HIP_RUNTIME_H`);
  where that guard changed between ROCm versions, every spelling is tested
  (`#if defined(_HIPSPARSE_H_) || defined(HIPSPARSE_H)`). A macro whose header has no counterpart
  in the run's library profile is reported with what its condition evaluates to.
- `cuda-version-macro` (HIP211): version and compiler macros with no faithful HIP counterpart
  (`CUDART_VERSION` 12040 vs `HIP_VERSION` 50221153, `__CUDACC_VER_MAJOR__`, `__NVCC__`) are
  reported at each condition, saying what it evaluates to after migration (`#if CUDART_VERSION <
  11020` becomes true: an undefined macro is 0), and at each use in code (which no longer compiles).

Both are name-table rules (merged into `NameTables`): the unknown-name rule stays quiet about the
names they know.
"""

from __future__ import annotations

import re

from ..api.tables import ApiEntry
from ..engine.compiled import CompiledRule, RuleCompileError, rule_kind
from ..engine.name_tables import combine_name_tables
from ..findings import Edit
from ..lang.cxx.definitions import file_definitions
from ..lang.cxx.includes import included_definitions_of
from ..lang.cxx.preprocessor import directives as cond
from ..lang.cxx.preprocessor.macros import numeric_macros
from ..lang.cxx.syntax import IDENTIFIER_KINDS

# Headers whose HIP counterpart includes hip/hip_common.h (`__HIP_PLATFORM_AMD__`): the runtime's,
# the libraries' (their HIP headers include hip/hip_runtime_api.h)
_BRINGS_HIP_COMMON = ("cuda", "cublas", "cusparse", "cusolver", "curand", "cufft", "cuComplex", "hip/", "hipblas",
                      "hipsparse", "hipsolver", "hiprand", "hipfft")

_HIP_PLATFORM = frozenset({"__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})

_RESULT = {True: "always true", False: "always false: the code it guards is never compiled",
           None: "decided by its other terms alone (an undefined macro counts as 0)"}


class _MacroRule(CompiledRule):
    kinds = IDENTIFIER_KINDS
    wants_tokens = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        params = rule.params or {}
        self.messages = params.get("messages") or {}
        for key in self.required_messages:
            if key not in self.messages:
                raise RuleCompileError(f"field `params.messages.{key}`: message template missing")
        self.entries: dict[bytes, ApiEntry] = {}

    required_messages: tuple[str, ...] = ()

    combine = classmethod(combine_name_tables)

    def applies_to_fragments(self) -> bool:
        return False

    def _text(self, key: str | None, **values: str) -> str:
        """The template `params.messages.KEY` (None: the rule's `message`) with values."""
        text = self.rule.message if key is None else self.messages[key]
        for name in sorted(values, key=len, reverse=True):
            text = text.replace(f"${name}", values[name])
        return text

    @staticmethod
    def _project_defines(ctx, name: bytes) -> bool:
        """A project that defines the macro itself (a fallback `#define CUDART_VERSION 0`, a
        dynlink header's own `__CUDA_API_VERSION`) decides its value: not ours to report."""
        if name in file_definitions(ctx):
            return True
        return name in included_definitions_of(ctx)

    def _undefined_here(self, ctx, name: str) -> bool:
        """Whether `name` is one of this rule's macros that nothing defines after migration."""
        raise NotImplementedError

    def _report_condition(self, ctx, directive, data: bytes, message_key: str | None, **values: str) -> None:
        """One finding per directive, at the first of this rule's undefined macros in it, saying
        what the directive's test evaluates to after migration."""
        key = ("feature-macro-directive", self.code, directive.start_byte)
        cache = ctx.cache
        if key in cache:
            return
        cache[key] = True
        names = [n for n in _identifiers(directive, data) if self._undefined_here(ctx, _text(n, data))]
        if not names:
            return
        numbers = _numeric_macros(ctx)

        def build(name: str):
            # the file's own numbers are read; whether they are defined where tested is not
            return (False, None) if self._undefined_here(ctx, name) else (None, numbers.get(name))

        result = cond.truth(directive, data, build)
        distinct = list(dict.fromkeys(_text(n, data) for n in names))
        first = names[0]
        fix = self._condition_fix(ctx, directive, data, result)
        ctx.report(self, first.start_byte, first.end_byte,
                   self._text(message_key, NAMES=" and ".join(f"`{n}`" for n in distinct),
                              WHY="; ".join(self._why(n) for n in distinct),
                              DIRECTIVE=cond.header_text(directive, data),
                              RESULT=_RESULT[result] + _surviving(directive, data, result), **values),
                   data={"evaluates_to": result, "macros": distinct,
                         "governs_lines": list(cond.governed_lines(directive, data))},
                   **(dict(edits=fix[0], applicability="safe", description=fix[1]) if fix else {}))

    def _condition_fix(self, ctx, directive, data: bytes, result: bool | None) -> tuple[list[Edit], str] | None:
        return None

    def _why(self, name: str) -> str:
        raise NotImplementedError


@rule_kind("cuda-header-guard")
class HeaderGuardRule(_MacroRule):
    """Macros CUDA headers define, mapped to the guard of the header the migration includes."""

    required_messages = ("no_counterpart", "outside", "compiler", "calling_convention")

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        params = rule.params or {}
        headers = dict(params.get("hip_headers") or {})
        if settings.library_profile == "roc":
            headers.update(params.get("roc_headers") or {})
        hip_guards = params.get("hip_guards") or {}
        self.calling_conventions: set[str] = set()  # removed where code uses them
        # macro -> (CUDA header, what it is there, HIP header or None, guards, where checked)
        self.macros: dict[str, tuple[str, str, str | None, list[str], str]] = {}
        for macro, spec in (params.get("header_macros") or {}).items():
            spec = {"header": spec} if isinstance(spec, str) else spec
            cuda_header = spec["header"]
            if cuda_header not in headers:
                raise RuleCompileError(f"field `params.header_macros.{macro}`: {cuda_header} is not in `hip_headers`")
            hip_header = headers[cuda_header]
            guards: list[str] = []
            checked = "no counterpart in this migration (HIP120 / HIP192 report its include)"
            if hip_header is not None:
                if hip_header not in hip_guards:
                    raise RuleCompileError(f"field `params.hip_guards`: no guard for {hip_header}")
                guards = list(hip_guards[hip_header]["guards"])
                checked = hip_guards[hip_header]["checked"]
            what = spec.get("what", "the include guard")
            if spec.get("note"):
                checked = f"{checked}; {spec['note']}"
            self.macros[macro] = (cuda_header, what, hip_header, guards, checked)
            if spec.get("calling_convention"):
                self.calling_conventions.add(macro)
            self.entries[macro.encode()] = ApiEntry.inline(macro, guards[0] if len(guards) == 1 else None, "define")
        # compiler macros with a faithful HIP counterpart: macro -> (HIP macro, source)
        self.renames: dict[str, tuple[str, str]] = {}
        for macro, spec in (params.get("compiler_macros") or {}).items():
            self.renames[macro] = (spec["hip"], spec["source"])
            self.entries[macro.encode()] = ApiEntry.inline(macro, spec["hip"], "define")

    def check(self, entry, start, end, ctx, node):
        name = entry.cuda
        if self._project_defines(ctx, name.encode()):
            return
        if name in self.renames:
            hip, source = self.renames[name]
            ctx.report(self, start, end, self._text("compiler", NAME=name, HIP=hip, SOURCE=source),
                       edits=[Edit(start, end, hip)], description=f"Rename to `{hip}`")
            return
        cuda_header, what, hip_header, guards, checked = self.macros[name]
        where = cond.place(node)
        data = ctx.data
        if where is None and name in self.calling_conventions:
            cut = end
            while data[cut:cut + 1] in (b" ", b"\t"):
                cut += 1
            ctx.report(self, start, end, self._text("calling_convention", NAME=name, WHAT=what, HEADER=cuda_header),
                       edits=[Edit(start, cut, "")], description=f"Remove `{name}`")
            return
        if not guards:
            if where is not None:
                self._report_condition(ctx, where.directive, data, "no_counterpart")
            else:
                ctx.report(self, start, end, self._text("outside", NAME=name, WHAT=what, HEADER=cuda_header,
                                                        HIP="no counterpart"))
            return
        values = dict(NAME=name, WHAT=what, HEADER=cuda_header, HIP=hip_header, CHECKED=checked,
                      GUARDS=" / ".join(f"`{g}`" for g in guards))
        edit = self._edit(where, node, start, end, guards, data) if where is not None else None
        if edit is None:
            ctx.report(self, start, end, self._text("outside", **values))
            return
        ctx.report(self, start, end, self.message(**values), edits=[edit],
                   description=f"Test `{' or '.join(guards)}`")

    @staticmethod
    def _edit(where: cond.Place, node, start: int, end: int, guards: list[str], data: bytes) -> Edit | None:
        if where.how == "value":
            return None  # the macro's value, not whether it is defined: nothing to map it to
        if len(guards) == 1:
            return Edit(start, end, guards[0])
        if where.how == "defined":
            d = where.defined
            return Edit(d.start_byte, d.end_byte, "(" + " || ".join(f"defined({g})" for g in guards) + ")")
        directive = where.directive
        token = directive.children[0]
        if token.type not in ("#ifdef", "#ifndef"):
            return None  # #elifdef: no `#elif` spelling keeps its place in the chain as simply
        if where.how == "ifdef":
            text = "#if " + " || ".join(f"defined({g})" for g in guards)
        else:
            text = "#if " + " && ".join(f"!defined({g})" for g in guards)
        return Edit(token.start_byte, end, text)

    def _undefined_here(self, ctx, name: str) -> bool:
        spec = self.macros.get(name)
        return spec is not None and not spec[3] and not self._project_defines(ctx, name.encode())

    def _why(self, name: str) -> str:
        cuda_header, what, hip_header, _, checked = self.macros[name]
        if hip_header is None:
            return f"`{name}` is {what} of CUDA's {cuda_header}, which has {checked}"
        return f"`{name}` is {what} of CUDA's {cuda_header}; its counterpart {hip_header} defines no macro to test ({checked})"


@rule_kind("cuda-version-macro")
class VersionMacroRule(_MacroRule):
    """Version and compiler macros of CUDA that no HIP header or compiler defines."""

    required_messages = ("code", "macro")

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        # macro -> (what defines it in CUDA, HIP's nearest, on its own scale)
        self.macros: dict[str, tuple[str, str]] = {}
        for macro, spec in ((rule.params or {}).get("macros") or {}).items():
            self.macros[macro] = (spec["cuda"], spec["hip"])
            self.entries[macro.encode()] = ApiEntry.inline(macro, None, "define")

    def check(self, entry, start, end, ctx, node):
        name = entry.cuda
        if self._project_defines(ctx, name.encode()):
            return
        where = cond.place(node)
        if where is not None:
            if not any(_text(n, ctx.data) in _HIP_PLATFORM for n in _identifiers(where.directive, ctx.data)):
                self._report_condition(ctx, where.directive, ctx.data, None)
            # (else the test decides for HIP itself: `#if defined(__HIP_PLATFORM_AMD__) || CUDART_VERSION >= 11000`)
            return
        macro = _defining_macro(ctx.data, start) if node is None else None
        if macro is not None:
            ctx.report(self, start, end, self._text("macro", NAME=name, WHY=self._why(name), MACRO=macro))
            return
        ctx.report(self, start, end, self._text("code", NAME=name, WHY=self._why(name)))

    def _undefined_here(self, ctx, name: str) -> bool:
        return name in self.macros and not self._project_defines(ctx, name.encode())

    def _condition_fix(self, ctx, directive, data: bytes, result: bool | None) -> tuple[list[Edit], str] | None:
        """An `#if` that only old CUDA toolkits take (`#if CUDART_VERSION < 11020`, always true after
        migration) whose block does nothing but `#define` CUDA names HIP declares at the target
        (aliases of the newer names for old toolkits: `#define cublasComputeType_t cudaDataType_t`):
        skipped on AMD, as CUDA 11.2 and later skip it. Renamed, such aliases would redefine HIP's
        own names (`#define hipblasComputeType_t hipDataType`). Only after a CUDA or HIP include of
        the file, which brings hip/hip_common.h's `__HIP_PLATFORM_AMD__`."""
        if result is not True or directive.type != "preproc_if" or directive.child_by_field_name("alternative"):
            return None
        test = directive.child_by_field_name("condition")
        body = [c for c in directive.named_children if c != test and c.type != "comment"]
        if test is None or not body or any(c.type != "preproc_def" for c in body):
            return None
        from ..api.tables import all_table_paths, as_entry, table_rows, version_tuple
        from ..lang.cxx.preprocessor.layout import scan

        target = version_tuple(ctx.settings.target_rocm)
        for define in body:
            name = _text(define.child_by_field_name("name"), data).encode()
            row = next((rows[name] for rows in map(table_rows, all_table_paths()) if name in rows), None)
            entry = as_entry(row) if row is not None else None
            # (a HIP name the target declares: added by it, not removed, not experimental)
            if entry is None or not entry.hip or not entry.hip_added or entry.experimental \
                    or version_tuple(entry.hip_added) > target \
                    or (entry.hip_removed and version_tuple(entry.hip_removed) <= target):
                return None
        if not any(i.depth == 0 and i.end <= directive.start_byte and i.header.startswith(_BRINGS_HIP_COMMON)
                   for i in scan(data).includes):
            return None
        return ([Edit(test.start_byte, test.start_byte, "!defined(__HIP_PLATFORM_AMD__) && ("),
                 Edit(test.end_byte, test.end_byte, ")")],
                "Skip the old-CUDA aliases on AMD: HIP declares the names they alias")

    def _why(self, name: str) -> str:
        cuda, hip = self.macros[name]
        return f"`{name}`: {cuda}; {hip}"


def _surviving(directive, data: bytes, result: bool | None) -> str:
    """Which branch of the chain HIP compiles instead, where the outcome is known: the `#else` /
    `#elif` after a directive that is always false (nvcc may never have compiled it), none of the
    later ones after one that is always true."""
    alternative = directive.child_by_field_name("alternative")
    if result is None or alternative is None:
        return ""
    line = data.count(b"\n", 0, alternative.start_byte) + 1
    head = cond.header_text(alternative, data) if alternative.type != "preproc_else" else "#else"
    if result:
        return f"; the `{head}` branch (line {line}) and any after it are never compiled"
    if alternative.type == "preproc_else":
        return f"; the `#else` branch (line {line}) is compiled instead"
    return f"; the chain goes on at `{head}` (line {line})"


def _text(node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)")


def _defining_macro(data: bytes, start: int) -> str | None:
    """The macro whose `#define` body holds the byte at `start` (continuation lines followed)."""
    line = data.rfind(b"\n", 0, start) + 1
    while line > 0 and data[max(0, line - 3):line - 1].endswith(b"\\"):
        line = data.rfind(b"\n", 0, line - 1) + 1
    m = _DEFINE.match(data, line + len(data[line:start]) - len(data[line:start].lstrip()))
    return m.group(1).decode() if m and m.end() <= start else None


def _identifiers(directive, data: bytes) -> list:
    """Identifiers of a directive's test, in order."""
    if directive.type in ("preproc_ifdef", "preproc_elifdef"):
        name = directive.child_by_field_name("name")
        return [name] if name is not None else []
    root = cond.condition_of(directive)
    out = []
    stack = [root] if root is not None else []
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            out.append(n)
        stack.extend(reversed(n.children))
    return out


def _numeric_macros(ctx) -> dict[str, int]:
    root = ctx.file_context
    got = root.cache.get("_numeric_macros")
    if got is None:
        got = root.cache["_numeric_macros"] = numeric_macros(root.tree.root_node, root.data)
    return got
