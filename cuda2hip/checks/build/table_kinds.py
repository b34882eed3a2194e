"""The table-driven rule kinds of the build-file languages.

- `build-flags` (cmake, make): compiler flags and program names from a flag table (nvcc spellings
  -> clang/hipcc ones), in the arguments of the CMake commands named in `commands`, or in
  Makefile variable values and recipe lines.
- `build-libraries` (cmake, make): CUDA libraries (`CUDA::x` targets, `-lx`) from a library
  table; `which: mapped` renames those with a counterpart, `which: unmapped` reports the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...api.arch import offload_archs
from ...api.build_tables import (FlagEntry, FlagIndex, LibraryEntry, TableError, convert, flag_table_file,
                                 library_table_file, resolve)
from ...engine.compiled import RuleCompileError, rule_kind
from ...findings import Edit
from ...lang.build.cmake_syntax import COMMAND_KINDS, Argument, command_of
from ...lang.build.tokens import IMPORTED_TARGET, Token, cmake_tokens, make_tokens, removal_span
from .cmake_kinds import BuildRule

MAKE_KINDS = frozenset({"variable_assignment", "recipe_line", "define_directive"})


@dataclass
class _Container:
    """Where a run of tokens lives: bounds for removals and the separator of new options."""

    tokens: "list[Token] | tuple[Token, ...]"
    lo: int
    hi: int
    joiner: str | None  # None: more than one option cannot be written here
    args: dict[int, Argument] = field(default_factory=dict)  # CMake: token id -> its argument


@rule_kind("build-flags")
class BuildFlagsRule(BuildRule):
    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if rule.language == "cmake":
            self.kinds = COMMAND_KINDS
            self.commands = frozenset(c.lower() for c in self.params.get("commands", []))
            if not self.commands:
                raise RuleCompileError("field `params.commands`: name the CMake commands whose arguments hold flags")
        elif rule.language == "make":
            self.kinds = MAKE_KINDS
        else:
            raise RuleCompileError(f"build-flags rules are for cmake or make, not {rule.language!r}")
        if "table" not in self.params and "flags" not in self.params:
            raise RuleCompileError("field `params`: a build-flags rule needs `table` or `flags`")
        if "table" in self.params:
            self.table_path = resolve(rule.source_path, self.params["table"])
        self._index: FlagIndex | None = None

    def index(self, ctx) -> FlagIndex:
        if self._index is None:
            entries: list[FlagEntry] = []
            try:
                if "table" in self.params:
                    entries.extend(flag_table_file(self.table_path))
                if "flags" in self.params:
                    entries.extend(convert(self.params["flags"], FlagEntry, f"{self.code} params.flags"))
                extra = ctx.options(self).get("extra-flags") or []
                entries.extend(convert(extra, FlagEntry, f"rule-options.{self.code}.extra-flags"))
            except TableError as exc:
                raise RuleCompileError(str(exc)) from None
            self._index = FlagIndex(entries)
        return self._index

    def visit(self, node, ctx):
        for container in self._containers(node, ctx):
            self._scan(container, ctx)

    def _containers(self, node, ctx):
        data = ctx.data
        if self.rule.language == "make":
            if node.type == "variable_assignment":
                parts = [c for c in node.named_children if c.type == "text"]
            elif node.type == "define_directive":
                parts = [c for c in node.named_children if c.type == "raw_text"]
            else:
                parts = [node]
            for p in parts:
                yield _Container(make_tokens(data, p.start_byte, p.end_byte), p.start_byte, p.end_byte, " ")
            return
        cmd = command_of(node, data)
        if cmd is None or cmd.name not in self.commands:
            return
        flag_string = cmd.name in ("set", "string")
        tokens = []
        for arg in cmd.args:
            if not arg.bracket:
                tokens.extend((t, arg) for t in cmake_tokens(arg))
        args_node = next((c for c in node.named_children if c.type == "argument_list"), node)
        # One container per command: an option's value may be the next argument.
        yield _Container([t for t, _ in tokens], args_node.start_byte, args_node.end_byte,
                         " " if flag_string else ";", {id(t): arg for t, arg in tokens})

    def _joiner(self, container: _Container, token: Token) -> str | None:
        if self.rule.language == "make":
            return " "
        arg = container.args.get(id(token))
        if arg is None:
            return container.joiner
        if token.in_genex and not arg.quoted:
            return None
        return container.joiner if arg.quoted else ";"

    def _bounds(self, container: _Container, token: Token) -> tuple[int, int]:
        if self.rule.language == "cmake":
            arg = container.args.get(id(token))
            if arg is not None and arg.quoted:
                return arg.start, arg.end
        return container.lo, container.hi

    def _scan(self, container: _Container, ctx):
        index = self.index(ctx)
        toks = container.tokens
        arch_done = any(t.text.startswith("--offload-arch") for t in toks)
        archs = offload_archs(self.settings)
        i = 0
        while i < len(toks):
            tok = toks[i]
            hit = index.lookup(tok.text)
            i += 1
            if hit is None:
                continue
            entry, flag, value = hit
            end_tok = tok
            if value is None and entry.wants_value() and "=" not in tok.text and not entry.program:
                if i >= len(toks):
                    continue
                end_tok = toks[i]
                value = end_tok.text
                i += 1
            kind = entry.kind()
            written = tok.text if end_tok is tok else f"{tok.text} {end_tok.text}"
            replacement: str | None = None
            applicability = entry.applicability
            if kind == "values":
                if value not in entry.values:
                    continue
                replacement = entry.values[value]
            elif kind == "replace":
                replacement = entry.replace
                if entry.program and "/" in tok.text:
                    applicability = "unsafe"  # drops the directory: the new program must be on PATH
            elif kind == "split-list":
                joiner = self._joiner(container, tok)
                parts = [p for p in (value or "").split(",") if p]
                if joiner is not None or len(parts) == 1:
                    replacement = (joiner or " ").join(parts)
            elif kind == "offload-arch" and archs:
                if arch_done:
                    replacement = ""
                else:
                    joiner = self._joiner(container, tok)
                    if joiner is not None or len(archs) == 1:
                        replacement = (joiner or " ").join(f"--offload-arch={a}" for a in archs)
                        arch_done = True
            msg = self.message(FLAG=written, HIP=replacement or "", NOTE=entry.note)
            if replacement is None:
                ctx.report(self, tok.start, end_tok.end, msg)
                continue
            if replacement == "":
                lo, hi = self._bounds(container, tok)
                s, e = removal_span(ctx.data, tok.start, end_tok.end, lo, hi)
                edits = [Edit(s, e, "")]
                desc = f"Remove `{written}`"
            else:
                edits = [Edit(tok.start, end_tok.end, replacement)]
                desc = f"Replace with `{replacement}`"
            ctx.report(self, tok.start, end_tok.end, msg, edits=edits, applicability=applicability,
                       description=desc)


@rule_kind("build-libraries")
class BuildLibrariesRule(BuildRule):
    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        if rule.language == "cmake":
            self.kinds = COMMAND_KINDS
        elif rule.language == "make":
            self.kinds = MAKE_KINDS
        else:
            raise RuleCompileError(f"build-libraries rules are for cmake or make, not {rule.language!r}")
        self.which = self.params.get("which", "mapped")
        if self.which not in ("mapped", "unmapped"):
            raise RuleCompileError("field `params.which`: mapped or unmapped")
        if "table" not in self.params:
            raise RuleCompileError("field `params.table`: a build-libraries rule needs a library table")
        self.table_path = resolve(rule.source_path, self.params["table"])
        self._maps = None

    def maps(self):
        if self._maps is None:
            try:
                entries = library_table_file(self.table_path)
            except TableError as exc:
                raise RuleCompileError(str(exc)) from None
            self._maps = ({e.target: e for e in entries if e.target},
                          {e.cuda: e for e in entries if e.cuda},
                          {e.package: e for e in entries if e.package})
        return self._maps

    def _check(self, entry: LibraryEntry, name: str, start: int, end: int, ctx, as_lib: bool):
        other = entry.counterpart(self.settings.library_profile)
        new = (other.lib if as_lib else other.target) if other else None
        if self.which == "unmapped":
            if new is None:
                ctx.report(self, start, end, self.message(NAME=name, NOTE=entry.note, HIP="", PACKAGE=""))
            return
        if new is None:
            return
        new = f"-l{new}" if as_lib else new
        package = other.package or ""
        msg = self.message(NAME=name, HIP=new, NOTE=entry.note, PACKAGE=package)
        ctx.report(self, start, end, msg, edits=[Edit(start, end, new)], description=f"Replace with `{new}`")

    def visit(self, node, ctx):
        targets, libs, packages = self.maps()
        data = ctx.data
        if self.rule.language == "make":
            parts = [c for c in node.named_children if c.type in ("text", "raw_text")] \
                if node.type != "recipe_line" else [node]
            for p in parts:
                for tok in make_tokens(data, p.start_byte, p.end_byte):
                    if tok.text.startswith("-l") and tok.text[2:] in libs:
                        self._check(libs[tok.text[2:]], tok.text, tok.start, tok.end, ctx, True)
            return
        cmd = command_of(node, data)
        if cmd is None:
            return
        if cmd.name == "find_package" and cmd.args and cmd.args[0].text in packages:
            a = cmd.args[0]
            self._check(packages[a.text], a.text, a.start, a.end, ctx, False)
        for arg in cmd.args:
            if arg.bracket:
                continue
            for m in IMPORTED_TARGET.finditer(arg.text):
                entry = targets.get(m.group())
                if entry is not None:
                    self._check(entry, m.group(), arg.start + m.start(), arg.start + m.end(), ctx, False)
