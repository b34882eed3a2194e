"""The type of an expression as far as the file shows it: the declared type of a variable or
parameter (local, of the enclosing function, or at file / namespace scope before the use), through
subscripts, `*`/`&`, casts and pointer arithmetic. No overload resolution, no templates, no
typedef chains: where the file does not show the type, the answer is None and callers say so."""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

import tree_sitter as ts

from ..lazy_regex import LazyRegex
from .syntax import declarator_name, find_declaration, named, text


class Declared(NamedTuple):
    name: str  # the type's name, qualifiers and `struct`/`enum` dropped ("cudaDeviceProp", "float")
    pointers: int  # levels of pointer (and array) on top of it

    def spelled(self) -> str:
        return self.name + "*" * self.pointers


_QUALIFIERS = re.compile(r"\b(?:const|volatile|struct|class|union|enum|typename|__restrict__|__restrict|restrict)\b")
_UNKNOWN = frozenset({"auto", "decltype"})
# Containers whose subscript gives their first template argument.
_CONTAINERS = LazyRegex(r"^(?:std::)?(?:vector|array|deque)$")
_SCOPES = frozenset({"translation_unit", "namespace_definition", "linkage_specification", "declaration_list"})


def type_name(node: ts.Node | None, data: bytes) -> str | None:
    """`cudaDeviceProp` of the type nodes `cudaDeviceProp`, `struct cudaDeviceProp`,
    `const ::cudaDeviceProp`; None for `auto` and template parameters the file does not show."""
    if node is None:
        return None
    if node.type in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier"):
        node = node.child_by_field_name("name")
        if node is None:
            return None
    name = " ".join(_QUALIFIERS.sub(" ", text(node, data)).split())
    name = name.removeprefix("::")
    if not name or name.split("<")[0] in _UNKNOWN:
        return None
    return name


def _pointers(decl: ts.Node | None) -> int | None:
    """Pointer and array levels of a declarator (None: a function, not an object)."""
    n = 0
    while decl is not None:
        kind = decl.type
        if kind in ("pointer_declarator", "abstract_pointer_declarator", "array_declarator",
                    "abstract_array_declarator"):
            n += 1
        elif kind in ("function_declarator", "abstract_function_declarator"):
            return None
        elif kind in ("identifier", "field_identifier"):
            break
        inner = decl.child_by_field_name("declarator")
        if inner is None and kind in ("reference_declarator", "parenthesized_declarator"):
            inner = next(iter(decl.named_children), None)
        decl = inner
    return n


def _declarator_of(decl: ts.Node, name: str, data: bytes) -> ts.Node | None:
    for d in decl.children_by_field_name("declarator"):
        if declarator_name(d, data) == name:
            return d
    return None


# The declarations directly in a scope, by name: [the text they are of, {(scope start, end,
# kind): {name: [start byte of each declaration]}}]. Built once per scope and text: looking
# through every earlier sibling at each use made a huge file quadratic. Positions, not nodes, so
# that no tree is kept alive after its file (a few MB of ints for a 16 MB file).
_SCOPE_TABLES: list = [None, {}]


def _declarations_in(scope: ts.Node, data: bytes) -> dict[str, list[int]]:
    if _SCOPE_TABLES[0] is not data:
        _SCOPE_TABLES[:] = [data, {}]
    key = (scope.start_byte, scope.end_byte, scope.kind_id)
    table = _SCOPE_TABLES[1].get(key)
    if table is None:
        table = _SCOPE_TABLES[1][key] = {}
        for sib in scope.named_children:
            if sib.type == "declaration":
                for d in sib.children_by_field_name("declarator"):
                    name = declarator_name(d, data)
                    if name:
                        table.setdefault(name, []).append(sib.start_byte)
    return table


def _scope_declaration(node: ts.Node, name: str, data: bytes) -> tuple[ts.Node, ts.Node] | None:
    """(type node, declaration) of `name` declared at file or namespace scope before `node`
    (the last such declaration)."""
    cur = node
    while cur is not None:
        parent = cur.parent
        if parent is None:
            break
        if parent.type in _SCOPES:
            starts = _declarations_in(parent, data).get(name, ())
            before = bisect.bisect_left(starts, cur.start_byte)
            if before:
                sib = parent.first_named_child_for_byte(starts[before - 1])
                return sib.child_by_field_name("type"), sib
        cur = parent
    return None


def declared(ident: ts.Node, data: bytes) -> Declared | None:
    """The declared type of the variable or parameter `ident` names."""
    name = text(ident, data)
    found = find_declaration(ident, name, data) or _scope_declaration(ident, name, data)
    if found is None:
        return None
    typ, decl = found
    base = type_name(typ, data)
    if base is None:
        return None
    d = _declarator_of(decl, name, data) if decl.type != "parameter_declaration" else decl.child_by_field_name(
        "declarator")
    levels = _pointers(d)
    if levels is None:
        return None
    return Declared(base, levels)


def _descriptor(node: ts.Node | None, data: bytes) -> Declared | None:
    """The type of a `type_descriptor` (`float *`, `const cudaDeviceProp&`)."""
    if node is None or node.type != "type_descriptor":
        return None
    base = type_name(node.child_by_field_name("type"), data)
    levels = _pointers(node.child_by_field_name("declarator"))
    return Declared(base, levels) if base is not None and levels is not None else None


def _element(d: Declared | None) -> Declared | None:
    if d is None:
        return None
    if d.pointers > 0:
        return Declared(d.name, d.pointers - 1)
    m = re.match(r"^([\w:]+)\s*<\s*([^,<>]+?)\s*(?:,[^<>]*)?>$", d.name)
    if m and _CONTAINERS.match(m.group(1)):
        inner = m.group(2).strip()
        return Declared(inner.rstrip("* "), inner.count("*"))
    return None


def expression_type(node: ts.Node | None, data: bytes, depth: int = 0) -> Declared | None:
    """The type of an expression, where the file shows it."""
    if node is None or depth > 8:
        return None
    kind = node.type
    if kind == "identifier":
        return declared(node, data)
    if kind == "parenthesized_expression":
        inner = named(node)
        return expression_type(inner[0], data, depth + 1) if len(inner) == 1 else None
    if kind == "subscript_expression":
        return _element(expression_type(node.child_by_field_name("argument"), data, depth + 1))
    if kind == "pointer_expression":
        inner = expression_type(node.child_by_field_name("argument"), data, depth + 1)
        op = node.child_by_field_name("operator")
        if inner is None or op is None:
            return None
        return Declared(inner.name, inner.pointers + 1) if text(op, data) == "&" else _element(inner)
    if kind == "cast_expression":
        return _descriptor(node.child_by_field_name("type"), data)
    if kind == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "template_function" and text(fn.child_by_field_name("name"), data) in (
                "static_cast", "reinterpret_cast", "const_cast"):
            args = named(fn.child_by_field_name("arguments"))
            return _descriptor(args[0], data) if len(args) == 1 else None
        return None
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and text(op, data) in ("+", "-"):
            for side in ("left", "right"):
                t = expression_type(node.child_by_field_name(side), data, depth + 1)
                if t is not None and t.pointers > 0:
                    return t
        return None
    return None
