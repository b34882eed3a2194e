"""Compiled built-in rules, kept from one run's engine to the next in a process."""

from __future__ import annotations

from ..rulebook.schema import Rule
from ..settings import Settings
from .compiled import CompiledRule, compile_rule

# The compiled built-in rules of this process, kept from one run's engine to the next: a
# resident server's fork (resident/) then runs a check with the rules its warm-up compiled, and so
# do consecutive runs in one process. A compiled rule reads of the settings only the fields of
# `_compile_key` (the file's root and paths come with each file's context), and keeps no state of
# a file or a run (an engine already shares it between files, and forked workers between runs of
# theirs). Keyed by rule id and those fields; the Rule object itself is checked, so that rules
# loaded anew (user rules, or built-ins after their files changed) are compiled anew.
COMPILED_BUILTINS: dict[tuple[str, bytes], tuple[Rule, CompiledRule]] = {}


def _compile_key(settings: Settings) -> bytes:
    import msgspec

    return msgspec.json.encode([settings.target_rocm, settings.library_profile, settings.kernel_launch,
                                settings.experimental, settings.rule_options, settings.extra])


def compile_builtin_once(rule: Rule, settings: Settings) -> CompiledRule:
    if not getattr(rule, "builtin", False):
        return compile_rule(rule, settings)
    key = (rule.id, _compile_key(settings))
    got = COMPILED_BUILTINS.get(key)
    if got is not None and got[0] is rule:
        got[1].settings = settings
        return got[1]
    compiled = compile_rule(rule, settings)
    COMPILED_BUILTINS[key] = (rule, compiled)
    return compiled
