"""Rule kinds of CMake commands (the table-driven `build-flags` and `build-libraries`, for CMake
and Make, are in table_kinds.py; both build on `BuildRule`).

- `cmake-command`: a command (by name) and optionally one of its arguments (regex, position,
  the keyword before it); fix by `template` (replaces the regex match, or its group `fix`) or by
  a named fix builder.
- `cmake-words`: whole words in command arguments (variables, properties) from a `names` table:
  renamed, or reported with a note when they have no HIP counterpart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ...engine.builders import get_builder
from ...engine.compiled import CompiledRule, RuleCompileError, rule_kind
from ...findings import Edit
from ...lang.build.cmake_syntax import COMMAND_KINDS, Argument, Command, command_of
from ...lang.build.tokens import WORD


def expand(template: str, values: dict[str, str]) -> str:
    for key in sorted(values, key=len, reverse=True):
        template = template.replace(f"${key}", values[key])
    return template


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="kebab"):
    pass


class ArgumentSelector(_Strict):
    regex: str  # searched in the argument's value; group `fix` (if any) is what a template replaces
    from_index: int = 0
    after: list[str] | None = None  # the argument right before is one of these
    not_after: list[str] = []
    unquoted: bool = False


class Selector(_Strict):
    commands: list[str]  # lower-case names; "*" = any command
    argument: ArgumentSelector | None = None


@dataclass
class CommandMatch:
    """What a `cmake-command` rule matched: builders receive it as `match`."""

    command: Command
    argument: Argument | None
    regex: re.Match | None
    start: int
    end: int
    values: dict[str, str] = field(default_factory=dict)


class BuildRule(CompiledRule):
    """What every build-file rule kind shares: its params, whole files only, built fixes reported."""

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.params: dict[str, Any] = dict(rule.params or {})

    def applies_to_fragments(self) -> bool:
        return False

    def _report_built(self, ctx, start, end, message, built, description=""):
        if built is False:
            return
        if built is None:
            ctx.report(self, start, end, message)
            return
        ctx.report(self, start, end, built.message or message, edits=built.edits,
                   applicability=built.applicability, description=built.description or description,
                   effort=built.effort, data=built.data or None)


@rule_kind("cmake-command")
class CMakeCommandRule(BuildRule):
    kinds = COMMAND_KINDS

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        raw = self.params.get("match")
        if raw is None:
            raise RuleCompileError("field `params.match`: a cmake-command rule needs `match`")
        try:
            self.selectors = msgspec.convert(raw if isinstance(raw, list) else [raw], list[Selector])
        except msgspec.ValidationError as exc:
            raise RuleCompileError(f"field `params.match`: {exc}") from None
        from ...engine.rule_regex import UnsafeRegexError, compile_rule_regex

        self.regexes = []
        for s in self.selectors:
            try:
                self.regexes.append(compile_rule_regex(s.argument.regex, trusted=rule.builtin)
                                    if s.argument else None)
            except UnsafeRegexError as exc:
                raise RuleCompileError(f"field `params.match`: {exc}") from None
        fix = rule.fix
        self.template = fix.template if fix else None
        self.builder = get_builder(fix.builder, rule.family) if fix and fix.builder else None

    def visit(self, node, ctx):
        cmd = command_of(node, ctx.data)
        if cmd is None:
            return
        for sel, regex in zip(self.selectors, self.regexes):
            if "*" not in sel.commands and cmd.name not in sel.commands:
                continue
            if sel.argument is None:
                self._emit(CommandMatch(cmd, None, None, cmd.start, cmd.end, {"COMMAND": cmd.name}), ctx)
                continue
            a = sel.argument
            for arg in cmd.args:
                if arg.index < a.from_index or arg.bracket or (a.unquoted and arg.quoted):
                    continue
                before = cmd.args[arg.index - 1].text if arg.index else None
                if a.after is not None and before not in a.after:
                    continue
                if before in a.not_after:
                    continue
                m = regex.search(arg.text)
                if m is None:
                    continue
                values = {"COMMAND": cmd.name, "ARG": arg.text, "MATCH": m.group(0)}
                values.update({k: v for k, v in m.groupdict().items() if v is not None})
                self._emit(CommandMatch(cmd, arg, m, arg.start, arg.end, values), ctx)

    def _emit(self, cm: CommandMatch, ctx):
        message = self.message(**cm.values)
        if self.builder is not None:
            self._report_built(ctx, cm.start, cm.end, message, self.builder(cm, ctx, self))
            return
        if self.template is None or cm.regex is None:
            ctx.report(self, cm.start, cm.end, message)
            return
        group = "fix" if "fix" in cm.regex.re.groupindex else 0
        s = cm.argument.start + cm.regex.start(group)
        e = cm.argument.start + cm.regex.end(group)
        text = expand(self.template, cm.values)
        ctx.report(self, cm.start, cm.end, message, edits=[Edit(s, e, text)],
                   description=f"Replace with `{text}`")


@rule_kind("cmake-words")
class CMakeWordsRule(BuildRule):
    kinds = COMMAND_KINDS

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        names = self.params.get("names")
        if not isinstance(names, dict) or not names:
            raise RuleCompileError("field `params.names`: a cmake-words rule needs a `names` table")
        self.names: dict[str, tuple[str | None, str]] = {}
        for name, value in names.items():
            if isinstance(value, dict):
                unknown = set(value) - {"replace", "note"}
                if unknown:
                    raise RuleCompileError(f"field `params.names.{name}`: unknown keys {sorted(unknown)}")
                self.names[name] = (value.get("replace"), value.get("note", ""))
            else:
                self.names[name] = (value, "")

    def visit(self, node, ctx):
        cmd = command_of(node, ctx.data)
        if cmd is None:
            return
        for arg in cmd.args:
            if arg.bracket:
                continue
            for m in WORD.finditer(arg.text):
                hit = self.names.get(m.group())
                if hit is None:
                    continue
                replace, note = hit
                s, e = arg.start + m.start(), arg.start + m.end()
                msg = self.message(NAME=m.group(), HIP=replace or "", NOTE=note)
                if replace is None:
                    ctx.report(self, s, e, msg)
                else:
                    ctx.report(self, s, e, msg, edits=[Edit(s, e, replace)],
                               description=f"Rename to `{replace}`")
