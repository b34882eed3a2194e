"""The rules' cheap pre-filter: which rules can match a file, from the literal words their
patterns and predicates need (a rule is kept when all its `literals` occur in the file and, if it
has `alternatives`, every literal of one of the groups does).

A rule set asks once per file about ~1,100 distinct literals; searching the text for each one
cost ~3 ms a file. From a run's second file on, all the identifier-shaped literals are found in
one pass over the file's distinct words by an Aho-Corasick automaton (pyahocorasick), and each
rule is then one or two set operations. The answer is the one substring search gives: an
identifier-shaped literal occurs in the text exactly when it occurs in one of its
identifier-shaped words (frontends/cuda.py `distinct_words`). Qualified names (`::__ldg`, some 770
of them) are looked up among the identifier runs that follow a `::` in the text, sorted: `::all`
occurs exactly when one of those runs starts with `all`. The few other literals are searched in
the text itself.
"""

from __future__ import annotations

import re
from bisect import bisect_left

IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
QUALIFIED = re.compile(r"::[A-Za-z_$][A-Za-z0-9_$]*")
_AFTER_SCOPE = re.compile(rb"::([A-Za-z0-9_$]+)")


class _Test:
    """One rule's condition over the ids of the literals present."""

    __slots__ = ("required", "alternatives", "singles", "groups")

    def __init__(self, literals, alternatives, ids: dict[str, int]):
        self.required = frozenset(ids[lit] for lit in literals)
        self.alternatives = alternatives is not None
        # An empty group holds for every file; one-literal groups: any of them will do.
        self.singles = frozenset(ids[g[0]] for g in alternatives or () if len(g) == 1)
        self.groups = tuple(frozenset(ids[lit] for lit in g) for g in alternatives or () if len(g) != 1)

    def holds(self, present: set[int]) -> bool:
        if not self.required <= present:
            return False
        if not self.alternatives:
            return True
        return not self.singles.isdisjoint(present) or any(g <= present for g in self.groups)


Spec = tuple[tuple[str, ...], "tuple[tuple[str, ...], ...] | None"]  # (literals, alternatives)


class _Index:
    """The tests of one list of rule requirements, with the automaton of their words: shared by
    every rule set with the same requirements (`_index`), since building it costs ~3 ms."""

    def __init__(self, specs: tuple[Spec, ...]):
        literals = sorted({lit for lits, _ in specs for lit in lits}
                          | {lit for _, alts in specs for g in alts or () for lit in g})
        ids = {lit: i for i, lit in enumerate(literals)}
        self.tests = [_Test(lits, alts, ids) for lits, alts in specs]
        self._words = [(i, lit) for i, lit in enumerate(literals) if IDENTIFIER.fullmatch(lit)]
        self._word_bytes = [(i, lit.encode()) for i, lit in self._words]
        self._qualified = [(i, lit[2:].encode()) for i, lit in enumerate(literals) if QUALIFIED.fullmatch(lit)]
        self._other = [(i, lit.encode()) for i, lit in enumerate(literals)
                       if not IDENTIFIER.fullmatch(lit) and not QUALIFIED.fullmatch(lit)]
        self._automaton = None
        self._files = 0

    def _matcher(self):
        """The automaton of the identifier-shaped literals (~2 ms to build: for the second file
        that comes with its words on; build files do not, they search literal by literal)."""
        if self._automaton is None:
            import ahocorasick  # C extension: loaded only by a run that gets this far

            automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for i, lit in self._words:
                automaton.add_word(lit, i)
            automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def present(self, data: bytes, words: "set[bytes] | None") -> set[int]:
        """Ids of the literals that occur in `data` (`words`: its identifier-shaped words)."""
        found = {i for i, raw in self._other if raw in data}
        if self._qualified and b"::" in data:
            after = sorted(set(_AFTER_SCOPE.findall(data)))
            found.update(i for i, name in self._qualified if _starts_one(after, name))
        if words is None:
            found.update(i for i, raw in self._word_bytes if raw in data)
        elif words and self._words:
            text = b" ".join(words)
            self._files += 1
            if self._files == 1:  # a one-file run: a search per literal costs less than the automaton
                found.update(i for i, raw in self._word_bytes if raw in text)
            else:
                found.update(i for _, i in self._matcher().iter(text.decode("ascii")))
        return found


def _starts_one(ordered: list[bytes], prefix: bytes) -> bool:
    """Whether one of the sorted `ordered` starts with `prefix`."""
    at = bisect_left(ordered, prefix)
    return at < len(ordered) and ordered[at].startswith(prefix)


_INDEXES: dict[tuple[Spec, ...], _Index] = {}
_MAX_INDEXES = 32  # rule sets of a run: one per language and set of per-file ignores


def _index(specs: tuple[Spec, ...]) -> _Index:
    got = _INDEXES.get(specs)
    if got is None:
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.clear()
        got = _INDEXES[specs] = _Index(specs)
    return got


class LiteralFilter:
    """The pre-filter of one list of rule entries (compiled rules, or deferred ones with their
    cached literals)."""

    def __init__(self, entries: list):
        self._entries = entries
        self._index = _index(tuple(
            (tuple(e.literals), None if e.alternatives is None else tuple(tuple(g) for g in e.alternatives))
            for e in entries))

    def present(self, data: bytes, words: "set[bytes] | None") -> set[int]:
        return self._index.present(data, words)

    def keep(self, data: bytes, words: "set[bytes] | None" = None) -> list:
        """The entries that can match `data`, in their order."""
        present = self._index.present(data, words)
        entries = self._entries
        return [entries[i] for i, t in enumerate(self._index.tests) if t.holds(present)]
