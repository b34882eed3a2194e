"""The engine: the selected rules of a run, compiled once, and the rule set each file gets
(per-file ignores applied), organised for dispatch by node kind."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from ..lang.cxx.calls import CALL
from ..rulebook.loader import RuleSource, builtin_rules_dir, load_rules_keyed, read_prefilters, write_prefilters
from ..rulebook.schema import Rule
from ..rulebook.selection import SelectionError, select_rules, selector_matches
from ..settings import Settings
from .callee_index import CalleeIndex
from .compiled import CompiledRule
from .kinds import compile_rule
from .prefilter import LiteralFilter

# Rules the engine itself emits (kind: diagnostic), by id.
UNUSED_SUPPRESSION = "unused-suppression"
UNKNOWN_SUPPRESSION_CODE = "unknown-suppression-code"
PARSE_RECOVERY = "parse-recovery"
FIX_REVERTED = "fix-reverted"
SOURCE_ENCODING = "source-encoding"
# Reported by the run after the files are analysed (header_scope.py), never by a file's lint.
LOCAL_HEADER_NOT_MIGRATED = "local-header-not-migrated"


class Deferred:
    """A selected rule not compiled yet, with its cached pre-filter data: it is compiled for the
    first file that holds its words (`RuleSet.active`), never for a run whose files do not."""

    __slots__ = ("rule", "code", "id", "literals", "alternatives")

    def __init__(self, rule: Rule, literals: tuple[str, ...], alternatives):
        self.rule = rule
        self.code = rule.code
        self.id = rule.id
        self.literals = literals
        self.alternatives = alternatives


class RuleSet:
    """The rules that run on one file of one language."""

    def __init__(self, rules: "list[CompiledRule | Deferred]", known_codes: set[str], selected_codes: set[str],
                 engine: "Engine | None" = None):
        self._entries = rules
        self.known_codes = known_codes
        self.selected_codes = selected_codes
        # The engine that made this set: frontends of embedding languages (Python) get the rule
        # set of the embedded language (CUDA) from it.
        self.engine = engine
        self.by_id = {r.id: r for r in rules}

    @cached_property
    def supersedes(self) -> dict[str, frozenset[str]]:
        """Code -> the codes whose findings at the same range its findings replace."""
        return {e.rule.code: frozenset(e.rule.supersedes) for e in self._entries if e.rule.supersedes}

    def drop_superseded(self, findings: list) -> list:
        """`findings` without those inside the range of a finding that supersedes them."""
        table = self.supersedes
        if not table:
            return findings
        over = [(f.start, f.end, table[f.code]) for f in findings if f.code in table]
        if not over:
            return findings
        return [f for f in findings
                if not any(s <= f.start and f.end <= e and f.code in codes for s, e, codes in over)]

    @cached_property
    def _skip_branches(self) -> dict[str, frozenset[str]]:
        return {e.rule.code: frozenset(e.rule.skip_branches) for e in self._entries if e.rule.skip_branches}

    def drop_in_skipped_branches(self, findings: list, tree, data: bytes) -> list:
        """`findings` without those in the preprocessor branches their rule skips (`skip_branches`)."""
        table = self._skip_branches
        if not table or b"#" not in data or not any(f.code in table for f in findings):
            return findings
        from ..lang.cxx.preprocessor import macros
        from ..lang.cxx.preprocessor.directives import branch_kinds
        from ..api.tables import written_by_migration

        cuda = macros.cuda(written_by_migration)
        return [f for f in findings
                if not (table.get(f.code, frozenset()) & branch_kinds(tree, data, f.start, macros.HIP_CLANG, cuda))]

    @cached_property
    def rules(self) -> list[CompiledRule]:
        """Every rule of the set, compiled."""
        return [self._compiled(r) for r in self._entries]

    def _compiled(self, entry: "CompiledRule | Deferred") -> CompiledRule:
        return self.engine.compile(entry.rule) if type(entry) is Deferred else entry

    def diagnostic(self, rule_id: str) -> CompiledRule | None:
        entry = self.by_id.get(rule_id)
        return None if entry is None else self._compiled(entry)

    @cached_property
    def visitors(self) -> list[CompiledRule]:
        """The rules as dispatched: rules whose class has a `combine` classmethod (e.g. the
        name-table rules, thousands of names each) are merged into one visitor per class, so
        an identifier costs one look-up whatever the number of such rules."""
        out: list[CompiledRule] = []
        groups: dict[object, list[CompiledRule]] = {}
        for r in self.rules:
            combine = getattr(type(r), "combine", None)
            if combine is None:
                out.append(r)
            else:
                # keyed by the function: classes that share one combine share one visitor
                groups.setdefault(getattr(combine, "__func__", combine), []).append(r)
        out.extend(type(members[0]).combine(members) for members in groups.values())
        return out

    @cached_property
    def dispatch(self) -> dict[str, list[CompiledRule]]:
        """Node kind -> the rules that visit every node of that kind. Rules that only want calls
        of certain function names sit behind one `CalleeIndex` visitor for `call_expression`."""
        table: dict[str, list[CompiledRule]] = {}
        for r in self.visitors:
            if r.by_text or r.callees is not None:
                continue
            for kind in r.kinds:
                table.setdefault(kind, []).append(r)
        index = self._callee_index
        if index.by_name and not index.by_text:
            table.setdefault(CALL, []).append(index)
        return table

    @cached_property
    def dispatch_kinds(self) -> frozenset[str]:
        return frozenset(self.dispatch)

    @cached_property
    def _callee_index(self) -> "CalleeIndex":
        members = tuple(r for r in self.visitors if not r.by_text and r.callees is not None)
        # Files keep hundreds of different subsets of the rules, mostly with the same call
        # rules: their index (thousands of names) is built once per combination and engine.
        # The entry holds the rules, so that their ids stay theirs.
        cache = self.engine.callee_indexes if self.engine is not None else {}
        key = tuple(map(id, members))
        got = cache.get(key)
        if got is None:
            index = CalleeIndex()
            for r in members:
                index.add(r)
            index.settle()
            got = cache[key] = (members, index)
        return got[1]

    @cached_property
    def text_visitors(self) -> list[CompiledRule]:
        """Visitors that find their nodes by text (`by_text`), outside the kind dispatch."""
        out = [r for r in self.visitors if r.by_text]
        index = self._callee_index
        if index.by_name and index.by_text:
            out.append(index)
        return out

    @cached_property
    def token_rules(self) -> list[CompiledRule]:
        return [r for r in self.visitors if r.wants_tokens]

    @cached_property
    def whole_file_rules(self) -> list[CompiledRule]:
        return [r for r in self.visitors if r.whole_file]

    def active(self, data: bytes, words: "set[bytes] | None" = None) -> "RuleSet":
        """The rules whose literal identifiers all occur in `data` (cheap pre-filter).

        `words`: the identifier-shaped words of `data` (each maximal run of [A-Za-z0-9_$] from
        its first non-digit on), if the caller has them: an identifier-shaped literal occurs in
        `data` exactly when it occurs in one of these words, and the distinct words are a
        fraction of the text to search."""
        keep = self._literal_filter.keep(data, words)
        if len(keep) == len(self._entries) and not any(type(r) is Deferred for r in keep):
            return self
        # Files that keep the same rules share one set, and with it its dispatch tables.
        key = tuple(map(id, keep))
        got = self._subsets.get(key)
        if got is None:
            got = self._subsets[key] = RuleSet([self._compiled(r) for r in keep], self.known_codes,
                                               self.selected_codes, self.engine)
        return got

    @cached_property
    def _literal_filter(self) -> LiteralFilter:
        return LiteralFilter(self._entries)

    @cached_property
    def _subsets(self) -> dict[tuple[int, ...], "RuleSet"]:
        return {}

    @cached_property
    def fragment_rules(self) -> "RuleSet":
        """The rules that also run on macro bodies re-parsed as fragments."""
        return RuleSet([r for r in self.rules if r.applies_to_fragments()], self.known_codes,
                       self.selected_codes)

    def without(self, codes: set[str]) -> "RuleSet":
        return RuleSet([r for r in self._entries if r.code not in codes], self.known_codes, self.selected_codes,
                       self.engine)


class Engine:
    def __init__(self, settings: Settings, rules: list[Rule] | None = None):
        self.settings = settings
        # ids of call rules -> (the rules, their CalleeIndex): see RuleSet._callee_index
        self.callee_indexes: dict[tuple[int, ...], tuple[tuple, CalleeIndex]] = {}
        # The fingerprint of the rule files keys the cache of pre-filter data (rules given by
        # the caller have none: they are all compiled).
        self._rules_key: str | None = None
        if rules is None:
            rules, self._rules_key = load_all_rules_keyed(settings)
        self.all_rules = rules
        self._compiled_rules: dict[str, CompiledRule] = {}
        self._prefilters: dict | None = None
        self._new_prefilters = False
        self.selected = select_rules(rules, settings.select, settings.extend_select, settings.ignore)
        self.known_codes = {r.code for r in rules} | {r.id for r in rules}
        self.selected_codes = {r.code for r in self.selected} | {r.id for r in self.selected}
        self._by_language: dict[str, list[CompiledRule]] = {}
        self._compiled_diagnostics: list[CompiledRule] | None = None
        self._per_file = []
        if settings.per_file_ignores:
            import pathspec  # only runs that have per-file ignores pay for the import

            self._per_file = [
                (pathspec.GitIgnoreSpec.from_lines([pattern]), tuple(codes))
                for pattern, codes in settings.per_file_ignores.items()
            ]
        for _, codes in self._per_file:
            for c in codes:
                if not any(selector_matches(c, r) for r in rules):
                    raise SelectionError(f"per-file-ignores: {c!r} matches no rule")
        self._sets: dict[tuple[str, frozenset[str]], RuleSet] = {}
        self._check_rule_options()

    def _check_rule_options(self) -> None:
        for key, options in self.settings.rule_options.items():
            rule = self.rule_by_code(key)
            if rule is None:
                raise SelectionError(f"rule-options: {key!r} is not a rule code or id")
            unknown = sorted(set(options) - set(rule.options))
            if unknown:
                known = ", ".join(sorted(rule.options)) or "none"
                raise SelectionError(f"rule-options.{key}: unknown option(s) {', '.join(unknown)} "
                                     f"(options of {rule.code}: {known})")

    @property
    def compiled(self) -> dict[str, list[CompiledRule]]:
        """Every selected rule, compiled, by language."""
        for language in sorted({r.language for r in self.selected}):
            self.compiled_for(language)
        return {lang: rules for lang, rules in self._by_language.items() if rules}

    def compile(self, rule: Rule) -> CompiledRule:
        """The compiled form of `rule` (compiled once per engine)."""
        got = self._compiled_rules.get(rule.id)
        if got is None:
            got = self._compiled_rules[rule.id] = compile_rule(rule, self.settings)
            # A rule kind's words must follow from the rule and the code alone (never from
            # settings): they are cached by the rule files' fingerprint. Rules that need no word
            # are recorded too: a run that needs no rule compiled (results from the result
            # cache, where only HIP005's rule is looked at) then compiles none.
            if self._prefilters is not None \
                    and self._prefilters.get(rule.id) != (got.literals, got.alternatives):
                self._prefilters[rule.id] = (got.literals, got.alternatives)
                self._new_prefilters = True
        return got

    def compiled_for(self, language: str) -> list[CompiledRule]:
        """The selected rules of one language, compiled when first asked for: a run over .cu
        files never imports or compiles the Python and build-file rule kinds."""
        got = self._by_language.get(language)
        if got is None:
            got = self._by_language[language] = [self.compile(r) for r in self.selected
                                                 if r.language == language]
            self._save_prefilters()
        return got

    def prepare(self, language: str, *, everything: bool) -> None:
        """Compile, before any file runs, the rules of `language` that files will need: all of
        them (`everything`, e.g. before worker processes fork), else those whose pre-filter
        data is not cached (they may not compile: rule errors surface here, once). The others
        are compiled by the first file that holds their words."""
        if everything or self._load_prefilters() is None:
            self.compiled_for(language)
            return
        self._entries_for(language)  # compiles what has no cached pre-filter data
        self._save_prefilters()

    def _load_prefilters(self) -> dict | None:
        if self._prefilters is None and self._rules_key is not None:
            self._prefilters = read_prefilters(self._rules_key)
        return self._prefilters

    def _save_prefilters(self) -> None:
        if self._new_prefilters and self._rules_key is not None:
            self._new_prefilters = False
            write_prefilters(self._rules_key, self._prefilters)

    def _entries_for(self, language: str) -> "list[CompiledRule | Deferred]":
        """The selected rules of `language`: compiled ones, and `Deferred` ones for rules not
        compiled yet whose pre-filter data is cached."""
        compiled = self._by_language.get(language)
        if compiled is not None:
            return compiled
        prefilters = self._load_prefilters() or {}
        out: list[CompiledRule | Deferred] = []
        for r in self.selected:
            if r.language != language:
                continue
            got = self._compiled_rules.get(r.id)
            if got is None:
                known = prefilters.get(r.id)
                got = Deferred(r, *known) if known is not None else self.compile(r)
            out.append(got)
        return out

    def _diagnostics(self) -> list[CompiledRule]:
        if self._compiled_diagnostics is None:
            self._compiled_diagnostics = [self.compile(r) for r in self.selected if r.kind == "diagnostic"]
        return self._compiled_diagnostics

    def rule_by_code(self, code: str) -> Rule | None:
        for r in self.all_rules:
            if r.code == code or r.id == code:
                return r
        return None

    def ruleset_for(self, path: str, language: str) -> RuleSet:
        ignored: frozenset[str] = frozenset()
        if self._per_file:
            rel = _relative(path, self.settings.root)
            ignored = frozenset(
                r.code for spec, codes in self._per_file if spec.match_file(rel)
                for r in self.selected if any(selector_matches(c, r) for c in codes)
            )
        key = (language, ignored)
        rs = self._sets.get(key)
        if rs is None:
            # Engine diagnostics (unused suppressions, parse recovery, reverted fixes) serve
            # every language, whatever language their YAML names.
            own = self._entries_for(language)
            shared = [r for r in self._diagnostics() if r.language != language]
            rules = [r for r in own + shared if r.code not in ignored]
            rs = RuleSet(rules, self.known_codes, self.selected_codes - ignored, self)
            self._sets[key] = rs
        return rs


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def load_all_rules(settings: Settings, *, tests: bool = False) -> list[Rule]:
    """The rules a run with `settings` loads; `tests`: with their test cases."""
    return load_all_rules_keyed(settings, tests=tests)[0]


def load_all_rules_keyed(settings: Settings, *, tests: bool = False) -> tuple[list[Rule], str | None]:
    sources = []
    if settings.include_builtin_rules:
        sources.append(RuleSource(builtin_rules_dir(), builtin=True))
    sources.extend(RuleSource(Path(d), builtin=False) for d in settings.rule_dirs)
    # The rule caches are keyed by the rule files' content: used whatever `use_cache` (the
    # result cache, --no-cache) says.
    return load_rules_keyed(sources, tests=tests)
