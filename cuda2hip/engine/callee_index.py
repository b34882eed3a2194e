"""One visitor for every call rule of a rule set: a call's callee name picks the rules that want
it (see CalleeIndex)."""

from __future__ import annotations

from ..lang.cxx.calls import call_named_by, callee_name
from .compiled import CompiledRule
from .prefilter import IDENTIFIER as _IDENTIFIER


# id(rule) -> (the rule, its callees with their encoded form, whether all are identifiers): a
# call rule's names (thousands for the table rules) are encoded and matched once per process,
# not for each of the rule subsets files keep. The entry holds the rule, so its id stays its own.
_CALLEE_WORDS: dict[int, tuple[CompiledRule, tuple[tuple[str, bytes], ...], bool]] = {}


def _callee_words(rule: CompiledRule) -> tuple[tuple[tuple[str, bytes], ...], bool]:
    got = _CALLEE_WORDS.get(id(rule))
    if got is None or got[0] is not rule:
        names = tuple((name, name.encode()) for name in rule.callees)
        got = _CALLEE_WORDS[id(rule)] = (rule, names, all(_IDENTIFIER.fullmatch(n) for n, _ in names))
    return got[1], got[2]


class CalleeIndex:
    """Visits a call once: looks up its callee name and hands the call to the rules that want
    calls of that name, in rule order.

    For CUDA rules (whose frontend supports `by_text` visitors) the calls are found from their
    callee names instead: the frontend hands over the identifiers spelled as one of the names,
    and `visit` climbs from such an identifier to the call it names (the reverse of
    `calls.callee_node`). The file's other calls, usually nearly all, cost nothing."""

    kinds = frozenset({"identifier", "field_identifier"})  # what callee_node returns
    callees = None

    def __init__(self):
        self.by_name: dict[str, list[CompiledRule]] = {}
        self.by_text = False
        self._by_word: dict[bytes, list[CompiledRule]] = {}  # the same lists, by encoded name
        self._cuda_identifiers = True  # every rule added so far: CUDA, callees all identifiers

    def add(self, rule: CompiledRule) -> None:
        names, identifiers = _callee_words(rule)
        if names:
            self._cuda_identifiers = self._cuda_identifiers and identifiers and rule.language == "cuda"
        by_name, by_word = self.by_name, self._by_word
        for name, word in names:
            group = by_name.get(name)
            if group is None:
                group = by_name[name] = by_word[word] = []
            group.append(rule)

    def settle(self) -> None:
        self.by_text = bool(self.by_name) and self._cuda_identifiers
        self._words = frozenset(self._by_word)

    def wanted_texts(self, words: set[bytes]) -> set[bytes]:
        return self._words & words

    def visit(self, node, ctx) -> None:
        if self.by_text:
            call = call_named_by(node)
            if call is None:
                return
            rules = self._by_word.get(ctx.data[node.start_byte:node.end_byte])
            node = call
        else:
            rules = self.by_name.get(callee_name(node, ctx.data))
        if rules:
            for rule in rules:
                rule.visit(node, ctx)
