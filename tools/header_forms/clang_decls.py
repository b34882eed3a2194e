"""What a set of headers declares, from clang's own parse (libclang 15, the LLVM of Debian 12's
hipcc, through the `clang` Python bindings): free functions with their parameters (type, default
argument, whether the type is a template parameter) and CUDA attributes, records with their fields,
typedefs and one-identifier macros (HIP >= 6.0 spells `hipDeviceProp_t` as a macro).

Only what the preprocessor keeps counts: `#if 0` blocks, branches not taken for the configuration
and opt-in sections (`OCML_BASIC_ROUNDED_OPERATIONS`) are gone before clang sees a declaration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

LIBCLANG = "/usr/lib/x86_64-linux-gnu/libclang-15.so.1"


@lru_cache(maxsize=None)
def cindex():
    from clang import cindex as ci

    if not ci.Config.loaded:
        ci.Config.set_library_file(LIBCLANG)
    return ci


@dataclass(frozen=True)
class Param:
    type: str  # as clang spells it, `struct `/`enum ` dropped
    default: str | None  # the default argument's text, None without one
    template: bool  # the type is (a pointer/reference to) a template type parameter


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[Param, ...]
    template: bool
    device: bool
    host: bool
    file: str
    forwards_to: str | None = None  # an inline body `return ::G(p0, ..., pn);`: G, called with the same arguments

    @property
    def arity(self) -> tuple[int, int]:
        """(fewest, most) arguments a call may pass."""
        required = sum(1 for p in self.params if p.default is None)
        return required, len(self.params)


@dataclass
class Record:
    name: str
    fields: dict[str, str]  # field (dotted path into unnamed-type members) -> type
    file: str


@dataclass
class Declarations:
    functions: dict[str, list[Function]] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    typedefs: dict[str, str] = field(default_factory=dict)  # name -> record name it names
    macros: dict[str, str] = field(default_factory=dict)  # name -> the one identifier it expands to
    macro_names: set[str] = field(default_factory=set)  # every macro the kept files define
    # namespaced classes (inline `__v1`-style namespaces left out of the name) -> the names of
    # their public members, those of their bases included
    classes: dict[str, set[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def record(self, name: str) -> Record | None:
        """The record a type name names, through typedefs and one-identifier macros."""
        for _ in range(8):
            if name in self.records:
                return self.records[name]
            nxt = self.typedefs.get(name) or self.macros.get(name)
            if nxt is None or nxt == name:
                return None
            name = nxt
        return None


_LINE_MARKER = re.compile(r'^# (\d+) "([^"]*)"')


def line_markers(text: str) -> list[tuple[int, int, str]]:
    """(line of the preprocessed text, line it stands for, file) at each `# N "file"` marker."""
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        m = _LINE_MARKER.match(line)
        if m:
            out.append((i, int(m.group(1)), m.group(2)))
    return out


def _spelling(t) -> str:
    return re.sub(r"\b(?:struct|enum|union) ", "", t.spelling)


def _default(parm) -> str | None:
    """The default argument's text (tokens of the expression: the `= ` may come out of a macro,
    as HIP's `__dparm(0)`)."""
    exprs = [c for c in parm.get_children() if c.kind.is_expression()]
    if not exprs:
        return None
    return " ".join(t.spelling for t in exprs[-1].get_tokens()) or "?"


_FORWARD = re.compile(r"\s*\{\s*return\s*(?:::\s*)?([A-Za-z_]\w*)\s*\(([^;{}()]*)\)\s*;\s*\}")


@lru_cache(maxsize=64)
def _text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _forwards_to(c, params: list[str]) -> str | None:
    """G, where the function's whole body is `return ::G(p0, ..., pn);` with its own parameters
    in order (CUDA's C++ overloads that only call another function). Bodies are skipped by the
    parse: the text after the declaration is read instead."""
    end = c.extent.end
    if not params or not all(params) or end.file is None:
        return None
    m = _FORWARD.match(_text(end.file.name), end.offset)
    if m and [a.strip() for a in m.group(2).split(",")] == params:
        return m.group(1)
    return None


def _qualified(c) -> str:
    """`cooperative_groups::details::tile_impl` of a class cursor (inline `__v1`-style
    namespaces left out)."""
    K = cindex().CursorKind
    parts = []
    while c is not None and c.kind != K.TRANSLATION_UNIT:
        if c.spelling and not c.spelling.startswith("__"):
            parts.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(parts))


def _members(c) -> tuple[set[str], set[str]]:
    """(public member functions and fields of a class or class template, the qualified names of
    its public bases: a dependent base is a template whose specializations all count)."""
    ci = cindex()
    K = ci.CursorKind
    names, bases = set(), set()
    for k in c.get_children():
        if k.kind in (K.CXX_METHOD, K.FIELD_DECL, K.FUNCTION_TEMPLATE) and k.spelling.isidentifier() \
                and k.access_specifier == ci.AccessSpecifier.PUBLIC:
            names.add(k.spelling)
        elif k.kind == K.CXX_BASE_SPECIFIER and k.access_specifier == ci.AccessSpecifier.PUBLIC:
            for ref in [k, *k.get_children()]:
                base = ref.referenced
                if base is not None and base.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE):
                    bases.add(_qualified(base))
                    break
    return names, bases


def _with_bases(classes: dict[str, set[str]], bases: dict[str, set[str]]) -> None:
    """Every class's members, its bases' (transitively) included."""
    def members(name: str, seen: set) -> set[str]:
        got = set(classes.get(name, ()))
        for b in bases.get(name, ()):
            if b not in seen:
                seen.add(b)
                got |= members(b, seen)
        return got

    for name in list(classes):
        classes[name] = members(name, {name})


def parse(path: str, args: list[str], keep: Callable[[str, int], str | None],
          unsaved: list[tuple[str, str]] | None = None) -> Declarations:
    """Declarations of the translation unit `path` (clang `args`), in the files for which
    `keep(file, line)` gives the name to cite (None: not wanted)."""
    ci = cindex()
    K = ci.CursorKind
    options = (ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_INCOMPLETE
               | ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    tu = ci.Index.create().parse(path, args=args, unsaved_files=unsaved, options=options)
    out = Declarations()
    out.errors = [f"{d.location.file}:{d.location.line}: {d.spelling}" for d in tu.diagnostics
                  if d.severity >= ci.Diagnostic.Error]
    functions = (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE)
    records = (K.STRUCT_DECL, K.UNION_DECL, K.CLASS_DECL)
    classes = (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION)
    scopes = (K.LINKAGE_SPEC, K.UNEXPOSED_DECL)

    def where(c) -> str | None:
        loc = c.location
        return keep(loc.file.name, loc.line) if loc.file is not None else None

    def function(c, rel: str) -> Function:
        tparams = {t.spelling for t in c.get_children() if t.kind == K.TEMPLATE_TYPE_PARAMETER}
        params = []
        for p in c.get_children():
            if p.kind != K.PARM_DECL:
                continue
            base = re.sub(r"\b(?:const|volatile)\b|[*&\s]", "", p.type.spelling)
            params.append(Param(_spelling(p.type), _default(p), base in tparams))
        attrs = {a.kind for a in c.get_children()}
        names = [p.spelling for p in c.get_children() if p.kind == K.PARM_DECL]
        return Function(c.spelling, tuple(params), c.kind == K.FUNCTION_TEMPLATE,
                        K.CUDADEVICE_ATTR in attrs, K.CUDAHOST_ATTR in attrs or K.CUDADEVICE_ATTR not in attrs,
                        rel, _forwards_to(c, names))

    def unnamed(decl) -> bool:
        return decl.kind in records and (not decl.spelling or "(unnamed" in decl.spelling
                                         or "(anonymous" in decl.spelling)

    def fields(c, prefix: str, into: dict[str, str]) -> None:
        kids = list(c.get_children())
        named_types = {f.type.get_canonical().get_declaration().hash for f in kids if f.kind == K.FIELD_DECL}
        for f in kids:
            if f.kind in records and unnamed(f) and f.hash not in named_types:
                fields(f, prefix, into)  # an anonymous struct/union member: its fields are the outer record's
            elif f.kind == K.FIELD_DECL and f.spelling:
                decl = f.type.get_canonical().get_declaration()
                if unnamed(decl):
                    fields(decl, f"{prefix}{f.spelling}.", into)
                else:
                    into[prefix + f.spelling] = _spelling(f.type)

    bases: dict[str, set[str]] = {}
    # (cursor, qualifier): anonymous namespaces and linkage blocks keep names unqualified
    stack = [(tu.cursor, "")]
    while stack:
        scope, qual = stack.pop()
        for c in scope.get_children():
            if c.kind in scopes:
                stack.append((c, qual))
                continue
            if c.kind == K.NAMESPACE:
                stack.append((c, f"{qual}{c.spelling}::" if c.spelling else qual))
                continue
            if c.kind == K.MACRO_DEFINITION:
                rel = where(c)
                if rel is None:
                    continue
                out.macro_names.add(c.spelling)
                toks = [t.spelling for t in c.get_tokens()]
                if len(toks) == 2 and re.fullmatch(r"[A-Za-z_]\w*", toks[1]):
                    out.macros.setdefault(c.spelling, toks[1])
                continue
            if c.kind in classes and qual and c.spelling and (c.is_definition() or c.kind != K.CLASS_DECL) \
                    and where(c) is not None:
                name = _qualified(c)
                names, supers = _members(c)
                out.classes.setdefault(name, set()).update(names)
                bases.setdefault(name, set()).update(supers - {name})
            if c.kind not in functions and c.kind not in records and c.kind != K.TYPEDEF_DECL:
                continue
            rel = where(c)
            if rel is None or not c.spelling:
                continue
            if c.kind in functions:
                out.functions.setdefault(qual + c.spelling, []).append(function(c, rel))
            elif c.kind == K.TYPEDEF_DECL:
                target = c.underlying_typedef_type.get_canonical().get_declaration()
                if target.kind in records:
                    out.typedefs.setdefault(qual + c.spelling, target.spelling or f"<anonymous {c.spelling}>")
                    if not target.spelling or target.is_anonymous():
                        rec = Record(c.spelling, {}, rel)
                        fields(target, "", rec.fields)
                        out.records.setdefault(c.spelling, rec)
                        out.typedefs[c.spelling] = c.spelling
            elif c.is_definition() and not c.is_anonymous():
                rec = Record(qual + c.spelling, {}, rel)
                fields(c, "", rec.fields)
                out.records[rec.name] = rec
    _with_bases(out.classes, bases)
    return out
