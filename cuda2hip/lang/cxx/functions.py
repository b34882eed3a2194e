"""Function definitions of a C++ file as overload resolution sees them: scope, name, parameter
types, execution space, and the preprocessor branches they sit in.

Used by the collision rules: two definitions collide when they have one scope, name and
parameter list, their execution spaces overlap (clang lets a `__host__` and a `__device__`
function share a signature, not a `__host__ __device__` one and either), and no preprocessor
condition keeps them apart. Conditions are read as far as they are plain: the arms of one
`#if` chain exclude each other, and so do `#ifdef X` / `#ifndef X` (or `defined(X)` /
`!defined(X)` in a conjunction).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..lazy_regex import LazyRegex
from ...rocm_releases import DEFAULT as DEFAULT_TARGET
from .preprocessor import macros
from .preprocessor.conditions import Build, parse, requirements
from .preprocessor.directives import ARM_KINDS as _ARMS
from .preprocessor.directives import CONDITIONAL_KINDS as _CONDITIONAL
from .preprocessor.directives import test_text, truth
from .types import type_spelling

_SCOPES = frozenset({"namespace_definition", "class_specifier", "struct_specifier", "union_specifier"})

class Function(NamedTuple):
    node: object  # function_definition (or a member declaration in a class body)
    name_node: object  # the declarator's name, where findings point
    scope: tuple[str, ...]
    name: str  # as written (qualified names and operator names with their spacing dropped)
    template: str  # the template parameter list, "" for none
    params: tuple[object, ...]  # parameter_declaration nodes
    qualifiers: str  # const / & after the parameter list (member functions)
    spaces: frozenset[str]  # host / device
    arms: tuple[tuple[int, int], ...]  # (id of an #if chain, arm index) from the innermost out
    literals: frozenset[tuple[str, bool]]  # macros the enclosing conditions need (un)defined
    amd: bool | None  # whether hipcc compiles it for AMD GPUs (None: depends on other macros)

    def key(self, data: bytes, name_of) -> tuple:
        return (self.scope, self.name, self.template, self.qualifiers,
                tuple(type_spelling(p, data, name_of) for p in self.params))

    def dead_on_amd(self) -> bool:
        return self.amd is False or (None, False) in self.literals


def exclusive(a: Function, b: Function) -> bool:
    """Whether no configuration compiles both."""
    chains = dict(a.arms)
    if any(chain in chains and chains[chain] != arm for chain, arm in b.arms):
        return True
    return any((name, not value) in b.literals for name, value in a.literals)


def overlap(a: Function, b: Function) -> bool:
    """Execution spaces that clang cannot overload between (one in common)."""
    return bool(a.spaces & b.spaces)


class Definition(NamedTuple):
    """A function definition (or member declaration) before it is described in full."""

    node: object
    decl: object  # its function_declarator
    name_node: object
    name: str


def definitions(tree, data: bytes) -> list[Definition]:
    """The file's function definitions and member declarations, in order (cheap: the names)."""
    out: list[Definition] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        # a member declared in its class counts too: redeclaring it is an error
        if kind == "function_definition" or (kind == "field_declaration" and node.parent is not None
                                             and node.parent.type == "field_declaration_list"):
            got = _definition(node, data)
            if got is not None:
                out.append(got)
            continue
        if kind in ("compound_statement", "comment", "string_literal", "preproc_def", "preproc_function_def"):
            continue
        stack.extend(reversed(node.children))
    out.sort(key=lambda d: d.node.start_byte)
    return out


def file_definitions(ctx) -> list[Definition]:
    """`definitions` of a file context, computed once for the rules that share them."""
    got = ctx.cache.get("_cxx_definitions")
    if got is None:
        got = ctx.cache["_cxx_definitions"] = definitions(ctx.tree, ctx.data)
    return got


_WORD = LazyRegex(rb"[A-Za-z_]\w*")


def file_words(ctx) -> set[bytes]:
    """The identifier-shaped words of a file (the CUDA frontend keeps the set it computed)."""
    got = ctx.cache.get("_words")
    if got is None:
        got = ctx.cache["_words"] = set(_WORD.findall(ctx.data))
    return got


def functions(tree, data: bytes, amd: Build | None = None, wanted=None) -> list[Function]:
    """The file's definitions described in full (those whose name `wanted` accepts); `amd`: the
    AMD build (macros.amd; by default at the default target)."""
    return describe(definitions(tree, data), data, amd, wanted)


def describe(defs: list[Definition], data: bytes, amd: Build | None = None, wanted=None) -> list[Function]:
    amd = macros.amd(DEFAULT_TARGET) if amd is None else amd
    return [f for d in defs if wanted is None or wanted(d.name) for f in (_function(d, data, amd),) if f is not None]


def _definition(node, data: bytes) -> Definition | None:
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type in ("pointer_declarator", "reference_declarator", "parenthesized_declarator"):
        decl = decl.child_by_field_name("declarator") or next(
            (c for c in decl.named_children if c.type.endswith("declarator")), None)
    if decl is None or decl.type != "function_declarator":
        return None
    name_node = decl.child_by_field_name("declarator")
    if name_node is None or decl.child_by_field_name("parameters") is None:
        return None
    name = re.sub(r"\s+", "", data[name_node.start_byte:name_node.end_byte].decode("utf-8", "replace"))
    return Definition(node, decl, name_node, name)


def _function(d: Definition, data: bytes, amd: Build) -> Function | None:
    node, decl = d.node, d.decl
    params = decl.child_by_field_name("parameters")
    quals = " ".join(data[c.start_byte:c.end_byte].decode() for c in decl.children
                     if c.type in ("type_qualifier", "ref_qualifier"))
    outer = node.parent
    template = ""
    if outer is not None and outer.type == "template_declaration":
        tparams = outer.child_by_field_name("parameters")
        template = re.sub(r"\s+", " ", data[tparams.start_byte:tparams.end_byte].decode()) if tparams else "<>"
    pnodes = tuple(c for c in params.named_children if c.type in ("parameter_declaration",
                                                                   "optional_parameter_declaration"))
    if len(pnodes) == 1 and data[pnodes[0].start_byte:pnodes[0].end_byte].strip() == b"void":
        pnodes = ()
    return Function(node, _name_leaf(d.name_node), _scope(node, data), d.name, template, pnodes, quals,
                    _spaces(node, data), *_conditions(node, data, amd))


def _name_leaf(node):
    """The identifier of a qualified or template name (`S::m` -> `m`, `check<T>` -> `check`)."""
    while node.type in ("qualified_identifier", "template_function"):
        inner = node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return node


def _scope(node, data: bytes) -> tuple[str, ...]:
    names = []
    parent = node.parent
    while parent is not None:
        if parent.type in _SCOPES:
            name = parent.child_by_field_name("name")
            names.append("" if name is None else data[name.start_byte:name.end_byte].decode("utf-8", "replace"))
        parent = parent.parent
    return tuple(reversed(names))


def _spaces(node, data: bytes) -> frozenset[str]:
    words = set()
    for c in node.children:
        if c.type in ("compound_statement", "function_declarator") or c.type.endswith("declarator"):
            break
        words.update(re.findall(r"__\w+__", data[c.start_byte:c.end_byte].decode("utf-8", "replace")))
    if "__global__" in words:
        return frozenset({"kernel"})
    spaces = {s for s, w in (("host", "__host__"), ("device", "__device__")) if w in words}
    return frozenset(spaces or {"host"})


def _conditions(node, data: bytes, build: Build):
    arms: list[tuple[int, int]] = []
    literals: set[tuple[str | None, bool]] = set()
    amd: bool | None = True
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in _CONDITIONAL and child.type not in _ARMS and child != parent.child_by_field_name("condition"):
            root, index = parent, 0
            while root.type in _ARMS and root.parent is not None and root.parent.type in _CONDITIONAL:
                root, index = root.parent, index + 1
            arms.append((root.id, index))
            literals |= _arm_literals(parent, data)
            active = _active(root, index, data, build)
            amd = False if active is False or amd is False else (None if active is None or amd is None else True)
        child, parent = parent, parent.parent
    return tuple(arms), frozenset(literals), amd


def _own(arm, data: bytes, amd: Build) -> bool | None:
    """The value of an arm's own condition on AMD (`#else`: True)."""
    return True if arm.type == "preproc_else" else truth(arm, data, amd)


def _active(root, index: int, data: bytes, amd: Build) -> bool | None:
    """Whether arm `index` of the #if chain at `root` is the one compiled on AMD."""
    arm, earlier = root, []
    for _ in range(index):
        earlier.append(_own(arm, data, amd))
        arm = arm.child_by_field_name("alternative")
        if arm is None:
            return None
    if any(v is True for v in earlier):
        return False
    own = _own(arm, data, amd)
    if own is False:
        return False
    return True if own is True and all(v is False for v in earlier) else None


def _arm_literals(arm, data: bytes) -> set:
    """What the arm's own condition requires, where it is plain (conditions.requirements);
    `#else` of a plain condition requires its negation."""
    if arm.type == "preproc_else":
        head = arm.parent
        own = _arm_literals(head, data) if head is not None else set()
        return {(n, not v) for n, v in own} if len(own) == 1 else set()
    text = test_text(arm, data)
    return set(requirements(parse(text)) or ()) if text is not None else set()


def line_span(data: bytes, node) -> tuple[int, int] | None:
    """(start of the node's first line, end of its last line) where the node has its lines to
    itself (only blanks before it, blanks or a comment after it), else None."""
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    if data[start:node.start_byte].strip():
        return None
    end = data.find(b"\n", node.end_byte)
    end = len(data) if end < 0 else end + 1
    rest = data[node.end_byte:end].strip()
    if rest and not rest.startswith(b"//"):
        return None
    return start, end


def definition_node(fn: Function):
    """The node a guard goes around: the definition with its `template <...>` head."""
    node = fn.node
    return node.parent if node.parent is not None and node.parent.type == "template_declaration" else node


def param_name(data: bytes, p) -> str | None:
    """The name a parameter declaration gives its parameter (None: unnamed)."""
    node = p.child_by_field_name("declarator")
    while node is not None and node.type != "identifier":
        inner = node.child_by_field_name("declarator")
        node = inner if inner is not None else next((c for c in node.named_children if c.type != "type_qualifier"), None)
    return None if node is None else data[node.start_byte:node.end_byte].decode("utf-8", "replace")
