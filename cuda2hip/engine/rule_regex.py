"""Regular expressions written in rule files.

Python's `re` backtracks: `^(a+)+$` on a 35-character identifier does not return in any useful
time. The built-in rules' expressions are reviewed and tested with the rules and keep using
`re`. A user rule's expression runs on RE2 (google-re2), which matches in time linear in the
text, whenever RE2 accepts its syntax. Only what RE2 cannot express (lookaround, backreferences,
atomic groups) falls back to `re`, and such an expression is refused when it repeats something
that itself repeats or alternates (`(a+)+`, `(x|xy)*`): the shapes that backtrack exponentially.
Regexes inside a raw tree-sitter query (`#match?`) are run by py-tree-sitter with `re`, so a
user query gets the same check.

RE2 differs from `re` in a few details (`\\w`, `\\d` and `\\b` are ASCII-only; `$` does not match
before a final newline); docs/architecture.md says so where user rules are described.
"""

from __future__ import annotations

import re

from ..lang.lazy_regex import LazyRegex


class UnsafeRegexError(ValueError):
    """A user regex that could backtrack catastrophically (or does not compile)."""


def compile_rule_regex(pattern: str, *, trusted: bool):
    """A compiled pattern with `search` / `match` / `fullmatch` / `finditer`; match objects
    have `group`, `groupdict`, `start`, `end`, `span` (by group name or number) and `re.groupindex`.
    `trusted`: a built-in rule's expression (plain `re`)."""
    if trusted:
        try:
            return re.compile(pattern)
        except re.error as exc:
            raise UnsafeRegexError(f"invalid regex {pattern!r}: {exc}") from None
    compiled = _re2(pattern)
    if compiled is not None:
        return compiled
    check_backtracking(pattern)
    try:
        return re.compile(pattern)
    except re.error as exc:  # check_backtracking parsed it, so this is unexpected
        raise UnsafeRegexError(f"invalid regex {pattern!r}: {exc}") from None


def check_backtracking(pattern: str, hint: str = ", or without lookaround/backreferences so that "
                       "it runs on the linear-time RE2 engine") -> None:
    """UnsafeRegexError if `pattern` (for Python's `re`) is invalid or has nested repetition."""
    from re import _parser  # the parser `re` itself uses (sre_parse before Python 3.11)

    try:
        parsed = _parser.parse(pattern)
    except re.error as exc:
        raise UnsafeRegexError(f"invalid regex {pattern!r}: {exc}") from None
    if _nested_repeat(parsed, False):
        raise UnsafeRegexError(
            f"regex {pattern!r} repeats a part that itself repeats or alternates (like `(a+)+`), "
            f"which backtracks exponentially on some inputs; rewrite it without the nesting{hint}")


def _nested_repeat(items, in_repeat: bool) -> bool:
    from re import _constants as c

    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            _low, high, sub = av
            repeats = high > 1  # `?` and {0,1} do not repeat
            if repeats and in_repeat:
                return True
            if _nested_repeat(sub, in_repeat or repeats):
                return True
        elif op is c.BRANCH:
            if in_repeat:
                return True
            if any(_nested_repeat(branch, in_repeat) for branch in av[1]):
                return True
        elif op is c.SUBPATTERN:
            if _nested_repeat(av[-1], in_repeat):
                return True
        elif op in (c.ASSERT, c.ASSERT_NOT):
            if _nested_repeat(av[1], in_repeat):
                return True
        elif op is c.ATOMIC_GROUP:
            if _nested_repeat(av, in_repeat):
                return True
        elif op is c.GROUPREF_EXISTS:
            _group, yes, no = av
            if _nested_repeat(yes, in_repeat) or (no is not None and _nested_repeat(no, in_repeat)):
                return True
    return False


# `#match?` / `#not-match?` / `#any-match?` predicates of a tree-sitter query, with their string.
_QUERY_REGEX = LazyRegex(r'#(?:not-|any-)?match\?\s+@[\w.-]+\s+"((?:[^"\\]|\\.)*)"')
_QUERY_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def check_query_regexes(query: str) -> None:
    """Refuse `#match?` regexes of a user query that could backtrack catastrophically."""
    for m in _QUERY_REGEX.finditer(query):
        text = re.sub(r"\\(.)", lambda e: _QUERY_ESCAPES.get(e.group(1), e.group(1)), m.group(1))
        check_backtracking(text, " (query regexes run on Python's backtracking `re`)")


def _re2(pattern: str):
    """`pattern` compiled by RE2, or None where RE2 does not accept its syntax."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a refused syntax is not an error here: `re` takes it
    try:
        return _Re2Pattern(re2.compile(pattern, options))
    except re2.error:
        return None


class _Re2Pattern:
    """An RE2 pattern whose matches take group names where `re`'s do (google-re2's `start`,
    `end` and `span` only take numbers)."""

    __slots__ = ("_regexp", "groupindex", "pattern")

    def __init__(self, regexp):
        self._regexp = regexp
        self.groupindex = dict(regexp.groupindex)
        self.pattern = regexp.pattern

    def _wrap(self, m):
        return None if m is None else _Re2Match(m, self)

    def search(self, text, *args):
        return self._wrap(self._regexp.search(text, *args))

    def match(self, text, *args):
        return self._wrap(self._regexp.match(text, *args))

    def fullmatch(self, text, *args):
        return self._wrap(self._regexp.fullmatch(text, *args))

    def finditer(self, text, *args):
        return (_Re2Match(m, self) for m in self._regexp.finditer(text, *args))


class _Re2Match:
    __slots__ = ("_m", "re")

    def __init__(self, m, pattern: _Re2Pattern):
        self._m = m
        self.re = pattern

    def _index(self, group):
        return self.re.groupindex[group] if isinstance(group, str) else group

    def start(self, group=0):
        return self._m.start(self._index(group))

    def end(self, group=0):
        return self._m.end(self._index(group))

    def span(self, group=0):
        return self._m.span(self._index(group))

    def group(self, *groups):
        return self._m.group(*groups)

    def groupdict(self, default=None):
        return self._m.groupdict(default)

    def __getitem__(self, group):
        return self._m.group(group)

    def __bool__(self):
        return True
