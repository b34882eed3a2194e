"""`hip-runtime-include` rule kind: `hip/hip_runtime.h` first, in every file that needs it.

nvcc includes cuda_runtime.h ahead of every .cu file; hipcc does not. So a file that uses kernels,
device built-ins, the runtime API or vector types gets `#include <hip/hip_runtime.h>`, and it must
come before the headers that need it: HIP headers such as hip/hip_cooperative_groups.h (HIP 5.2)
fail to compile when they come first, and hip_runtime.h declares C++ templates, so it cannot sit
inside an `extern "C"` block. Only the C/C++ standard headers and project headers that are fine on
their own may come before it.

Three cases:
- the file includes a runtime header itself, unconditionally: that include is moved up where an
  include that needs the runtime comes before it, or out of an `extern "C"` block;
- the runtime comes from a project header the file includes (which has or gets the include
  itself): nothing to do, unless an include that needs the runtime comes before that header;
- neither: the include is added after the include guard / `#pragma once`, else after the file's
  leading comments.

The same kind adds other headers a CUDA header brought in implicitly (`params`: `header` to add,
`provided_by`: headers whose include provides it, `provided_by_hip_profile`: more of them in the
default library profile only, `kernel_syntax: false` when kernel syntax does not need it,
`names_pattern`: the words to look up in the tables): e.g. cublas_v2.h includes cuComplex.h,
while neither hipBLAS's nor rocBLAS's header includes hip/hip_complex.h. Such headers compile in
any order, so only the runtime is moved up.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from pathlib import Path

from ...api.std_headers import is_standard_header
from ...api.tables import hip_names, resolve_tables, table_rows
from ...engine.compiled import CompiledRule, RuleCompileError, rule_kind
from ...engine.scanners import scanner
from ...findings import Edit
from ...lang import parse as parsing
from ...lang.cxx.preprocessor.directives import negated
from ...lang.cxx.preprocessor.layout import Include, scan

# Headers that declare everything a .cu file gets from nvcc's implicit include (the CUDA ones are
# rewritten to hip/hip_runtime.h by HIP100 in the same run), and those that declare the API only.
FULL_RUNTIME = frozenset({"hip/hip_runtime.h", "cuda_runtime.h", "cuda.h"})
API_RUNTIME = frozenset({"hip/hip_runtime_api.h", "cuda_runtime_api.h"})
# Kernel code: needs hip_runtime.h itself (hip_runtime_api.h lacks threadIdx & co., HIP 5.2).
_DEVICE_SYNTAX = (
    rb"__global__|__device__|__shared__|__constant__|__managed__|<<<|"
    rb"\b(?:threadIdx|blockIdx|blockDim|gridDim|warpSize|__syncthreads\w*|__threadfence\w*|__shfl\w*|"
    rb"__ballot\w*|__activemask|__ldg|atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)\w*)\b")
# The runtime API (CUDA or HIP spelling: the rule runs before and after renames), vector types
# and the qualifiers of hip_runtime_api.h's host_defines.
_API_NAME = rb"\b(?:cuda|hip|cu)[A-Z]\w*"
_API_SYNTAX = (
    rb"\b(?:make_)?(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]\b|\bdim3\b|"
    rb"\b__(?:host|forceinline|noinline|launch_bounds)__")
_NOT_CODE = frozenset({"comment", "string_literal", "string_content", "raw_string_literal", "raw_string_content",
                       "char_literal", "system_lib_string", "escape_sequence"})
DEVICE, API = 2, 1  # what a file needs: the full runtime, or the API header at least


@lru_cache(maxsize=8)
def _api_names(paths: tuple[str, ...]) -> frozenset[bytes]:
    """CUDA and HIP spellings of the runtime/driver names (the rule fires before or after renames)."""
    names: set[bytes] = set()
    for path in paths:
        names.update(table_rows(path))
        names.update(hip.encode() for hip in hip_names(path))
    return frozenset(names)


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
        # the runtime (which must come first), or another header that only has to be there
        self.ordered = "provided_by" not in params
        if self.ordered:
            self.full, self.api = FULL_RUNTIME, API_RUNTIME
        else:
            provided = list(params["provided_by"])
            if settings.library_profile == "hip":
                provided += params.get("provided_by_hip_profile", [])
            self.full, self.api = frozenset(provided), frozenset()
        self.kernel_syntax = params.get("kernel_syntax", True)
        # A rule's own pattern keeps Python's `re` (a user rule may write anything `re` takes);
        # the built-in default runs on the scanners' engine.
        self._api_name = (re.compile(params["names_pattern"].encode()) if "names_pattern" in params
                          else scanner(_API_NAME))
        self.runtime_first = frozenset(params.get("needs_runtime_first", ()))
        self.messages = params.get("messages", {})
        for key in ("late", "extern_c", "after_local") if self.ordered else ():
            if key not in self.messages:
                raise RuleCompileError(f"field `params.messages.{key}`: message template missing")
        self._header_cache: dict[tuple[str, bytes], tuple[int, bool]] = {}
        if not self.ordered and not self.kernel_syntax and not self.runtime_first:
            # Only a use of one of the names can make such a rule (hip_complex.h's) report: a
            # file that holds none of them skips it (the pre-filter), instead of a scan of
            # every cu*/hip* identifier of every file.
            self.alternatives = tuple((name.decode(),) for name in sorted(self.names))

    def applies_to_fragments(self) -> bool:
        return False

    def run_file(self, ctx):
        if ctx.settings.language_for(Path(ctx.path)) != "cuda":
            # CUDA text embedded in another file (a CuPy/torch kernel string): compiled by
            # hipRTC/torch with its own headers, not by including the runtime header.
            return
        layout = scan(ctx.data)
        includes = layout.includes
        full = [i for i in includes if i.header in self.full]
        use = None
        if not full:  # what the file uses decides whether the API header is enough
            use = self._first_use(ctx.data, ctx.tree, includes)
        need = use[3] if use else 0
        own = full or [i for i in includes if need < DEVICE and i.header in self.api]
        placed = next((i for i in own if i.depth == 0), None)
        if placed is not None:
            if self.ordered:
                self._keep_first(ctx, includes, placed)
            return
        if own or use is None:
            # a conditional runtime include is the project's own arrangement
            return
        start, end, what, _ = use
        covering = self._covering(ctx, includes, need)
        if covering is not None:
            blocker = self._blocker(ctx, includes, covering) if self.ordered else None
            if blocker is None:
                return
            pos = blocker.anchor
            msg = self._text("after_local", INCLUDE=covering.header, BEFORE=blocker.header,
                             LINE=str(_line(ctx.data, blocker.start)), USE=what)
        else:
            pos = self._insertion_point(ctx, start, layout)
            msg = self.message(USE=what, HEADER=self.header)
        text = f"#include <{self.header}>\n"
        if pos > 0 and ctx.data[pos - 1:pos] != b"\n":
            text = "\n" + text
        ctx.report(self, start, end, msg, edits=[Edit(pos, pos, text)], description=f"Include <{self.header}>")

    def _keep_first(self, ctx, includes: tuple[Include, ...], placed: Include) -> None:
        """Move the file's own runtime include above what needs it, and out of `extern "C"`."""
        blocker = self._blocker(ctx, includes, placed)
        dest = placed.anchor  # the start of its `extern "C"` construct, or its own line
        if blocker is not None:
            dest = min(dest, blocker.anchor)
        if dest >= placed.start:
            return
        data = ctx.data
        line = data[placed.start:placed.end]
        if not line.endswith(b"\n"):
            line += b"\n"
        if blocker is not None and blocker.anchor <= placed.anchor:
            msg = self._text("late", INCLUDE=_spelled(data, placed), BEFORE=blocker.header,
                             LINE=str(_line(data, blocker.start)))
        else:
            msg = self._text("extern_c", INCLUDE=_spelled(data, placed), LINE=str(_line(data, placed.anchor)))
        end = placed.end - 1 if data[placed.end - 1:placed.end] == b"\n" else placed.end
        cut = placed.end
        if _blank_line_at(data, _line_start(data, max(0, placed.start - 1))) and _blank_line_at(data, cut):
            cut = data.find(b"\n", cut) + 1  # no pair of blank lines where the include was
        ctx.report(self, placed.start, end, msg,
                   edits=[Edit(dest, dest, line.decode("utf-8")), Edit(placed.start, cut, "")],
                   description=f"Move the include of <{placed.header}> up")

    def _text(self, key: str, **values: str) -> str:
        text = self.messages[key]
        for name in sorted(values, key=len, reverse=True):
            text = text.replace(f"${name}", values[name])
        return text

    # --- which includes may come before the runtime

    def _blocker(self, ctx, includes: tuple[Include, ...], target: Include) -> Include | None:
        """The first include before `target` that needs the runtime ahead of it (or may)."""
        for inc in includes:
            if inc.start >= target.start:
                return None
            if not self._harmless(ctx, inc):
                return inc
        return None

    def _harmless(self, ctx, inc: Include) -> bool:
        if inc.header in self.full or inc.header in self.api:
            return True
        if is_standard_header(inc.header):
            return True
        if not inc.quoted:
            return False
        got = self._local(ctx.path, inc.header, ctx.settings.root)
        if got is None:
            return False
        need, provides = self._header_facts(*got, ctx.settings.root)
        # a project header that has (or gets) the runtime include first is fine anywhere; one
        # that needs nothing is fine if everything it includes is
        return provides or need == 0

    def _covering(self, ctx, includes: tuple[Include, ...], need: int) -> Include | None:
        """The first include of a project header through which the file gets the runtime."""
        for inc in includes:
            if not inc.quoted:
                continue
            got = self._local(ctx.path, inc.header, ctx.settings.root)
            if got is not None and self._header_facts(*got, ctx.settings.root)[1]:
                return inc
        return None

    @staticmethod
    def _local(including: str, name: str, root) -> tuple[str, bytes] | None:
        from ...lang.cxx.includes import local_header

        return local_header(including, name, root)

    def _header_facts(self, path: str, data: bytes, root, seen: frozenset[str] = frozenset()) -> tuple[int, bool]:
        """(what the header needs, whether it provides the runtime after migration) for a
        project header: it provides it if it includes a runtime header, gets the include from this
        rule, or includes a project header that does. Its need is 0 only if it and every header
        it includes are fine without the runtime."""
        key = (path, data)
        got = self._header_cache.get(key)
        if got is not None:
            return got
        self._header_cache[key] = (DEVICE, False)  # include cycles: assume the worst meanwhile
        need, includes = self._own_facts(data)
        provides = any(header in self.full or (need < DEVICE and header in self.api) for header, _ in includes)
        provides = provides or need > 0
        for header, quoted in includes:
            if provides:
                break
            if is_standard_header(header):
                continue
            sub = self._local(path, header, root) if quoted else None
            if sub is None or sub[0] in seen:
                need = max(need, DEVICE)  # an unknown header may need the runtime
                continue
            sub_need, sub_provides = self._header_facts(*sub, root, seen | {path})
            provides = sub_provides
            need = max(need, sub_need)
        self._header_cache[key] = (need, provides)
        return need, provides

    def _own_facts(self, data: bytes) -> tuple[int, list[tuple[str, bool]]]:
        """What a header's own text needs (its `_first_use`) and the headers it includes (name,
        quoted), kept on disk by content for runs that use the cache (content_facts): a check
        would otherwise scan and parse every header it reaches again."""
        import msgspec

        from ...cache import facts as content_facts

        kind = self._facts_kind
        stored = content_facts.lookup(kind, data)
        if stored is not None:
            try:
                need, includes = msgspec.msgpack.decode(stored, type=tuple[int, list[tuple[str, bool]]])
                if need in (0, API, DEVICE):
                    return need, includes
            except (msgspec.DecodeError, msgspec.ValidationError):
                pass
        found = scan(data).includes
        use = self._first_use(data, parsing.parse("cuda", data), found)
        need = use[3] if use else 0
        includes = [(i.header, i.quoted) for i in found]
        content_facts.store(kind, data, msgspec.msgpack.encode((need, includes)))
        return need, includes

    @cached_property
    def _facts_kind(self) -> str:
        # everything `_first_use` reads besides the text: the names (from the rule's tables),
        # the pattern that finds them, the headers that need the runtime first, kernel syntax
        from ...cache.digest import blake2b

        pattern = self._api_name.pattern if hasattr(self._api_name, "pattern") else _API_NAME
        h = blake2b(b"\0".join([pattern if isinstance(pattern, bytes) else pattern.encode(),
                                 repr(self.kernel_syntax).encode(),
                                 *sorted(h.encode() for h in self.runtime_first), b"", *sorted(self.names)]),
                    digest_size=12)
        return f"runtime-facts-{h.hexdigest()}"

    # --- what the file uses

    def _first_use(self, data: bytes, tree, includes: tuple[Include, ...]) -> tuple[int, int, str, int] | None:
        """(start, end, text, need) of the first use that needs the runtime; need is DEVICE for
        kernel code and for includes of headers that need the runtime ahead of them."""
        for inc in includes:
            if inc.header in self.runtime_first:
                return inc.start, inc.end - 1, f"#include <{inc.header}>", DEVICE
        for m in scanner(_DEVICE_SYNTAX).finditer(data) if self.kernel_syntax else ():
            if _in_code(tree, m.start(), m.end()):
                return m.start(), m.end(), m.group().decode(), DEVICE
        for m in self._api_name.finditer(data):
            if m.group() in self.names and _in_code(tree, m.start(), m.end()):
                return m.start(), m.end(), m.group().decode(), API
        for m in scanner(_API_SYNTAX).finditer(data) if self.kernel_syntax else ():
            if _in_code(tree, m.start(), m.end()):
                return m.start(), m.end(), m.group().decode(), API
        return None

    def _any_use(self, data: bytes, tree, includes: tuple[Include, ...], start: int, end: int) -> bool:
        """Whether something between `start` and `end` needs the runtime."""
        if any(start <= i.start < end and i.header in self.runtime_first for i in includes):
            return True
        patterns = [self._api_name] + ([scanner(_DEVICE_SYNTAX), scanner(_API_SYNTAX)] if self.kernel_syntax else [])
        for pattern in patterns:
            for m in pattern.finditer(data, start, end):
                if (pattern is not self._api_name or m.group() in self.names) and _in_code(tree, m.start(), m.end()):
                    return True
        return False

    def _insertion_point(self, ctx, use_start: int, layout) -> int:
        """At the start of the innermost conditional branch that holds every use (`#ifdef
        __CUDACC__` blocks of headers that C code includes too: the other branches must not get
        it), else after `#pragma once` or the include guard's #define, else after leading comments."""
        data, tree, includes = ctx.data, ctx.tree, layout.includes
        for body, end in layout.branches_at(use_start):
            if not self._any_use(data, tree, includes, 0, body) and not self._any_use(data, tree, includes, end, len(data)):
                return body
        return top_of_file(ctx)


def top_of_file(ctx) -> int:
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
    if first.type == "preproc_ifdef" and negated(first):
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


_CODE = frozenset({"translation_unit", "compound_statement", "function_definition"})


def _in_code(tree, start: int, end: int) -> bool:
    """Whether bytes [start, end) are code: the innermost node holding them that is either
    code (_CODE) or not (_NOT_CODE) decides. Found going down from the root with a cursor:
    climbing parent links costs tree-sitter a descent from the root each, quadratic in the
    depth of a long expression (50,000 terms)."""
    cursor = tree.root_node.walk()
    verdict = True
    while True:
        kind = cursor.node.type
        if kind in _NOT_CODE:
            verdict = False
        elif kind in _CODE:
            verdict = True
        if cursor.goto_first_child_for_byte(start) is None:
            return verdict
        child = cursor.node
        if not (child.start_byte <= start and end <= child.end_byte):
            return verdict


def _spelled(data: bytes, inc: Include) -> str:
    return f'"{inc.header}"' if inc.quoted else f"<{inc.header}>"


def _line(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def _line_end(data: bytes, pos: int) -> int:
    """Offset just after the line holding `pos - 1` (nodes of directives end after their newline)."""
    if pos > 0 and data[pos - 1:pos] == b"\n":
        return pos
    nl = data.find(b"\n", pos)
    return len(data) if nl < 0 else nl + 1


def _line_start(data: bytes, pos: int) -> int:
    return data.rfind(b"\n", 0, pos) + 1


def _blank_line_at(data: bytes, pos: int) -> bool:
    """Whether the line starting at `pos` is empty (a first line counts only if it is)."""
    if pos >= len(data):
        return False
    nl = data.find(b"\n", pos)
    return nl >= 0 and not data[pos:nl].strip()
