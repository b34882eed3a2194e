"""Name tables, one visitor for all: every rule kind that looks identifiers up in a table of
names (checks/api/rename.py's `rename` and `unmapped`, the unknown-name and feature-macro
kinds) is merged into one `NameTables` per rule set, through `combine_name_tables`. One dict
look-up on an identifier's bytes then finds every rule that knows the name, so the cost per
identifier does not grow with the number of tables, and a name one table knows is no unknown
name for another (a rule with `miss` is told of the names no table of the set matched).

Only identifier, type, field and namespace nodes are looked at (plus identifier tokens of macro
bodies), so comments and string literals are never touched, and a user name that merely
contains a CUDA name (`my_cudaStream_t`) is another identifier.
"""

from __future__ import annotations

import re

from ..api.tables import ApiEntry, as_entry
from ..lang.cxx.syntax import IDENTIFIER_KINDS
from .compiled import CompiledRule


_DEFINES = frozenset({"preproc_def", "preproc_function_def"})
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_SPACE = re.compile(rb"\s+")
_AFTER_DEFINE = re.compile(rb"#[ \t]*define[ \t]+\Z")


def _defined_as(define, node, data: bytes) -> bytes | None:
    """What the `#define` whose name is `node` defines it as, when that is one identifier
    (`#define cudaMalloc hipMalloc`) or a call of one with the same parameters
    (`#define cudaFree(p) hipFree(p)`): the identifier; else None."""
    if define.child_by_field_name("name") != node:
        return None
    value = define.child_by_field_name("value")
    if value is None:
        return None
    body = _SPACE.sub(b"", _COMMENT.sub(b" ", data[value.start_byte:value.end_byte]))
    if define.type == "preproc_function_def":
        params = define.child_by_field_name("parameters")
        if params is None:
            return None
        spelled = _SPACE.sub(b"", _COMMENT.sub(b" ", data[params.start_byte:params.end_byte]))
        if not body.endswith(spelled):
            return None
        body = body[:-len(spelled)]
    return body if body and body.replace(b"_", b"a").isalnum() else None


def combine_name_tables(cls, rules):
    """The `combine` of every name-table rule kind: the engine merges the rules that share this
    function into one `NameTables`, so that a name one rule's table knows is no unknown name
    for another."""
    return NameTables.for_rules(rules)



class NameTables(CompiledRule):
    """One visitor for every name-table rule of a rule set."""

    kinds = IDENTIFIER_KINDS
    wants_tokens = True

    def __init__(self, rules):
        self.rules = rules
        self.code = "+".join(r.code for r in rules)
        # Each rule's own table, looked up in turn: merging thousands of names into one index
        # would cost more start-up time than a pre-commit run spends on looking names up.
        self.tables: list[tuple[CompiledRule, dict]] = [
            (r, r.entries) for r in rules if getattr(r, "entries", None)]
        # rules that want the names no table of this set matched (see leftovers.py)
        self.unknown = [r for r in rules if hasattr(r, "miss")]

    _cache: dict[tuple[int, ...], "NameTables"] = {}

    @classmethod
    def for_rules(cls, rules) -> "NameTables":
        # Rule sets are rebuilt per file when pre-filters drop rules; the index is not.
        key = tuple(id(r) for r in rules)
        got = cls._cache.get(key)
        if got is None or got.rules != rules:
            got = cls._cache[key] = cls(rules)
        return got

    def applies_to_fragments(self) -> bool:
        return False

    # An identifier matters only when a table knows it, or when an unknown-name rule may report
    # it: the frontend visits just those (see CompiledRule.by_text).
    by_text = True

    _names: frozenset[bytes] | None = None
    _files = 0

    def wanted_texts(self, words: set[bytes]) -> set[bytes]:
        names = self._names
        if names is None and self._files >= 1 and len(self.tables) > 1:
            # From the second file on: every table's names in one set, one intersection per
            # file instead of one per table (a one-file run does not pay for building it).
            names = self._names = frozenset().union(*(entries for _, entries in self.tables))
        self._files += 1
        if names is not None:
            wanted = words & names
        else:
            wanted = set()
            for _, entries in self.tables:
                # a key view & a set looks up the set's words (set.intersection(dict) would go
                # over the table's thousands of names)
                wanted.update(entries.keys() & words)
        for rule in self.unknown:
            wanted.update(rule.reportable(words))
        return wanted

    def visit(self, node, ctx):
        start = node.start_byte
        # (`node.parent` walks down from the root: only for a name right after `#define`)
        if _AFTER_DEFINE.search(ctx.data, max(0, start - 32), start) is not None \
                and (parent := node.parent) is not None and parent.type in _DEFINES \
                and self._project_alias(parent, node, ctx):
            # A project's own alias of the name for exactly what the migration writes
            # (`#define cudaDeviceProp hipDeviceProp_t`): renamed, it would define HIP's name as
            # itself (HIP 6's `hipDeviceProp_t` is a macro of its own, so the type is lost).
            # The uses are renamed to the same name; left as it is, the alias is simply unused.
            # An alias for anything else keeps being renamed, so that its uses keep its meaning.
            return
        self.token(node.start_byte, node.end_byte, ctx.data[node.start_byte:node.end_byte], ctx, node)

    def _project_alias(self, define, node, ctx) -> bool:
        defined_as = _defined_as(define, node, ctx.data)
        if defined_as is None:
            return False
        name = ctx.data[node.start_byte:node.end_byte]
        for rule, entries in self.tables:
            entry = entries.get(name)
            resolution = getattr(rule, "resolution", None)
            if entry is None or resolution is None:
                continue
            if type(entry) is not ApiEntry:
                entry = entries[name] = as_entry(entry)
            target = resolution(entry).target
            if target is not None and target.encode() == defined_as:
                return True
        return False

    def token(self, start, end, name, ctx, node=None):
        hit = False
        for rule, entries in self.tables:
            entry = entries.get(name)
            if entry is not None:
                hit = True
                if type(entry) is not ApiEntry:
                    entry = entries[name] = as_entry(entry)
                rule.check(entry, start, end, ctx, node)
        if not hit:
            for rule in self.unknown:
                rule.miss(name, start, end, ctx, node)
