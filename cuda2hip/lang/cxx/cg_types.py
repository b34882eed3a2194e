"""The cooperative-groups class of a variable as the file shows it: `cg::thread_block_tile<32>`
through a namespace alias, `thread_block` after `using namespace cooperative_groups`, or `auto`
initialised by a call of one of the functions that make groups (`cg::this_thread_block()`,
`cg::tiled_partition<32>(block)`). tree-sitter reads `cg::thread_block_tile<32> t = ...;` in a
function body as comparisons, so such a declaration is also found by its text. HIP's classes have CUDA's names (hip/hip_cooperative_groups.h)."""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter as ts

from ..lazy_regex import LazyRegex
from .syntax import declarator_of, enclosing_function, find_declaration, text

NAMESPACE = "cooperative_groups"
# What CUDA's group-making functions return (cooperative_groups.h; HIP's have the same types).
_MADE_BY = {"this_thread_block": "thread_block", "this_grid": "grid_group", "coalesced_threads": "coalesced_group"}
_ALIAS = LazyRegex(rb"\bnamespace\s+(\w+)\s*=\s*(?:::)?\s*cooperative_groups\s*;")


_USING = re.compile(rb"\busing\s+(?:namespace\s+(?:::)?\s*(cooperative_groups)\s*;|(?:::)?\s*cooperative_groups\s*::\s*(\w+)\s*;)")


@lru_cache(maxsize=8)
def _scope(data: bytes) -> tuple[frozenset[str], bool, frozenset[str]] | None:
    """(the file's aliases of the namespace, whether it has `using namespace cooperative_groups`,
    the names it brings in with `using cooperative_groups::NAME`); None where the file never
    spells the namespace, so that no name of it can be in scope. Once per file: the field rules
    ask for each member access (bytes keep their hash, so the lookup costs no rescan)."""
    if b"cooperative_groups" not in data:
        return None
    names, whole = set(), False
    for m in _USING.finditer(data):
        if m.group(1):
            whole = True
        else:
            names.add(m.group(2).decode())
    return frozenset(m.group(1).decode() for m in _ALIAS.finditer(data)), whole, frozenset(names)


def names_namespace(data: bytes) -> bool:
    """Whether the file spells the namespace at all (no class of it can be named otherwise)."""
    return _scope(data) is not None


def class_name(spelled: str, data: bytes) -> str | None:
    """`cooperative_groups::thread_block_tile` of the type `spelled` (`cg::thread_block_tile<32>`)
    where the file makes it name the namespace's class; None otherwise."""
    scope = _scope(data)
    if scope is None:
        return None
    aliases, whole, used = scope
    base = spelled.split("<", 1)[0].replace(" ", "").removeprefix("::")
    qual, _, name = base.rpartition("::")
    if not name or not (qual == NAMESPACE or (qual and qual in aliases) or (not qual and (whole or name in used))):
        return None
    return f"{NAMESPACE}::{name}"


def made_class(ident: ts.Node, data: bytes) -> str | None:
    """The class of an `auto` variable `ident` that a group-making call initialises."""
    name = text(ident, data)
    found = find_declaration(ident, name, data)
    if found is None or found[0] is None or found[0].type != "placeholder_type_specifier":
        return None
    d = declarator_of(found[1], name, data)
    value = d.child_by_field_name("value") if d is not None and d.type == "init_declarator" else None
    if value is None or value.type != "call_expression":
        return None
    fn, qual = value.child_by_field_name("function"), ""
    if fn is not None and fn.type == "qualified_identifier":
        qual = text(fn.child_by_field_name("scope"), data) + "::"
        fn = fn.child_by_field_name("name")
    if fn is None:
        return None
    templated = fn.type == "template_function"
    called = text(fn.child_by_field_name("name") if templated else fn, data)
    if called == "tiled_partition":
        made = "thread_block_tile" if templated else "thread_group"
    else:
        made = _MADE_BY.get(called)
    return class_name(qual + made, data) if made else None


def _template_declared(ident: ts.Node, data: bytes) -> str | None:
    """The template type (`cg::thread_block_tile<32>`) of the last `TYPE<...> name` declaration
    text before `ident` in its function (the declarations tree-sitter reads as expressions)."""
    fn = enclosing_function(ident)
    if fn is None:
        return None
    name = text(ident, data)
    seen = _declarations_seen(data)
    key = (fn.start_byte, fn.end_byte, name)
    matches = seen.get(key)
    if matches is None:
        # Once per function and name (the rules ask for each use of a variable). From a given
        # start such a match has one end, so the matches before a use are those the text cut at
        # the use would give.
        pattern = rb"((?:\w+\s*::\s*)*\w+)\s*<[^;{}()<>]*>\s*&?\s*" + re.escape(name.encode()) + rb"\s*[=;({]"
        matches = seen[key] = [(fn.start_byte + m.end(), m.group(1).decode())
                               for m in re.finditer(pattern, data[fn.start_byte:fn.end_byte])]
    found = None
    for end, spelled in matches:
        if end > ident.start_byte:
            break
        found = spelled
    return found


@lru_cache(maxsize=2)
def _declarations_seen(data: bytes) -> dict[tuple[int, int, str], list[tuple[int, str]]]:
    """(function start, end, name) -> (end, type) of its `TYPE<...> name` texts, for one file."""
    return {}


def variable_class(ident: ts.Node, data: bytes) -> str | None:
    """The cooperative-groups class of the variable `ident` whose declared type the usual reading
    (expr_types) does not give."""
    if not names_namespace(data):
        return None
    made = made_class(ident, data)
    if made is not None:
        return made
    spelled = _template_declared(ident, data)
    return class_name(spelled, data) if spelled else None
