"""`hip-definition-collision` rule kind: user definitions that clash with what HIP's own headers
define, which CUDA's headers do not.

- Operators on the vector types. CUDA's `float3` has no operators; HIP's is `HIP_vector_type<float,
  3>`, whose members `++`, `--`, `+=`, `-=`, `*=`, `/=` (taking `const HIP_vector_type &`) are not
  templates, nor (ROCm 6.x and 7.x) its friends `operator*` and `operator/` taking
  `(HIP_vector_type, const HIP_vector_type &)`. A project's free `operator+=(float3 &, float3)` or
  `operator/(float3, float3)` then ties with HIP's for `a += b` / `a / b`: "use of overloaded
  operator '/' is ambiguous", at every use. HIP's other operators are templates, which lose to a
  project's non-template overload and never tie.
- Functions: a global function the project defines with the parameters and execution space of
  one HIP's headers define (clang's HIP wrappers define host `min(int, int)` and `max(int, int)`)
  is a redefinition.

What HIP defines is read from each release's hipcc AST of hip/hip_runtime.h by
tools/generate_hip_definitions_data.py (rules/api/collisions/hip-definitions*.json, one per
release; the run's --target-rocm picks the release that stands for it). The fix
guards the project's definition with `#if !defined(__HIP_PLATFORM_AMD__)` (hip/hip_common.h
defines the macro for clang's HIP compilation; on NVIDIA the vector types are CUDA's and need
the project's operators). It is safe where HIP's definition gives the same result for every
argument: a component-wise compound assignment or increment (what the member does, per the
header), an integer `min`/`max` written as the comparison, a `make_*` that assigns the
components in order. Anything else is reported with the fix marked unsafe.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import msgspec

from ...engine.compiled import CompiledRule, rule_kind
from ...findings import Edit
from ...lang.cxx.functions import (Function, definition_node, describe, file_definitions, file_words, line_span,
                                   param_name)
from ...lang.cxx.preprocessor.macros import amd
from ...lang.cxx.types import STD_TYPEDEFS, type_spelling

GUARD = "#if !defined(__HIP_PLATFORM_AMD__)"
CLANG_GUARD = "#if !defined(__HIP__)"
_COMPONENTS = "xyzw"
_INTEGERS = frozenset({"char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int",
                       "long", "unsigned long", "long long", "unsigned long long"})


# the releases whose headers the data was read from (tools/generate_hip_definitions_data.py)
RELEASES = ("5.2", "6.4", "7.2")


@lru_cache(maxsize=4)
def load(release: str = "5.2") -> dict:
    from ...rulebook.loader import builtin_rules_dir

    name = "hip-definitions.json" if release == RELEASES[0] else f"hip-definitions-{release}.json"
    path = Path(builtin_rules_dir()) / "api" / "collisions" / name
    return msgspec.json.decode(path.read_bytes())


def release_for(target_rocm: str | None) -> str:
    """The checked release that stands for the target (the newest without one)."""
    from ...api.forms import _release

    return _release(RELEASES, target_rocm or "").rocm


def _name(t: str) -> str:
    return STD_TYPEDEFS.get(t, t)


@rule_kind("hip-definition-collision")
class HipDefinitionCollisionRule(CompiledRule):
    whole_file = True

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        data = load(release_for(settings.target_rocm))
        self.vectors: dict[str, list] = data["vector_types"]
        self.members: dict[str, list] = {}
        for m in data["vector_members"]:
            self.members.setdefault(m["name"], []).append(m)
        self.friends: dict[str, list] = {}
        for m in data.get("vector_friends", ()):
            self.friends.setdefault(m["name"], []).append(m)
        self.functions: dict[str, list] = {n: [e for e in es if e["defined"]] for n, es in data["functions"].items()}
        names = self.names = set(self.members) | set(self.friends) | {n for n, es in self.functions.items() if es}
        self.amd = amd(settings.target_rocm)
        self.words = frozenset(n.encode() for n in names if not n.startswith("operator")) | {b"operator"}

    def applies_to_fragments(self) -> bool:
        return False

    def run_file(self, ctx):
        data = ctx.data
        if self.words.isdisjoint(file_words(ctx)):
            return
        for fn in describe(file_definitions(ctx), data, self.amd, self.names.__contains__):
            if fn.scope or fn.template or fn.dead_on_amd() or fn.node.type != "function_definition":
                continue
            if fn.name in self.friends and self._friend(ctx, fn):
                continue
            if fn.name in self.members:
                self._operator(ctx, fn)
            elif fn.name in self.functions:
                self._function(ctx, fn)

    # -- operators of HIP_vector_type ------------------------------------------------------------

    def _operator(self, ctx, fn: Function) -> None:
        data = ctx.data
        types = [type_spelling(p, data, _name) for p in fn.params]
        if not types:
            return
        vector = types[0].removesuffix(" &")
        if vector not in self.vectors:
            return
        rest = types[1:]
        for member in self.members[fn.name]:
            want = [p.replace("V", vector) for p in member["params"]]
            # the member's `const V &` ties with a parameter `V`, `const V` or `const V &`
            if len(want) == len(rest) and all(
                    r == w or (w == f"const {vector} &" and r in (vector, f"{vector} const &")) for r, w in zip(rest, want)):
                break
        else:
            return
        element, rank = self.vectors[vector]
        sig = f"{fn.name}({', '.join(types)})"
        same = self._componentwise(ctx, fn, rank)
        why = (f"`{vector}` is `HIP_vector_type<{element}, {rank}>` in HIP, whose own member `{fn.name}` "
               f"({member['header']}) ties with it: every `{_use(fn.name, len(rest))}` on `{vector}` is ambiguous")
        tail = ("; HIP's member does the same component by component" if same else
                "; this definition does not read as the component-wise operation HIP's member is: review before guarding it")
        self._report(ctx, fn, sig, why + tail, same, f"HIP's vector types define {fn.name} ({member['header']})")

    def _friend(self, ctx, fn: Function) -> bool:
        """A free operator with the parameters of one of HIP_vector_type's friends (`a / b`)."""
        data = ctx.data
        types = [type_spelling(p, data, _name) for p in fn.params]
        if not types:
            return False
        vector = types[0].removesuffix(" &").removesuffix(" const")
        if vector not in self.vectors:
            return False
        # by value or by const reference ties with HIP's `V` / `const V &` (a non-const reference
        # is a better match for lvalues and no match for rvalues: no tie)
        ties = (vector, f"{vector} const &")
        for friend in self.friends[fn.name]:
            if len(friend["params"]) == len(types) and all(t in ties for t in types):
                break
        else:
            return False
        element, rank = self.vectors[vector]
        sig = f"{fn.name}({', '.join(types)})"
        same = self._binary_componentwise(ctx, fn, vector, rank)
        why = (f"`{vector}` is `HIP_vector_type<{element}, {rank}>` in HIP, whose friend `{fn.name}` "
               f"({friend['header']}, not a template) ties with it: every `{_use(fn.name, 1)}` on `{vector}` is ambiguous")
        tail = ("; HIP's friend does the same component by component" if same else
                "; this definition does not read as the component-wise operation HIP's friend is: review before guarding it")
        self._report(ctx, fn, sig, why + tail, same, f"HIP's vector types define {fn.name} ({friend['header']})")
        return True

    def _binary_componentwise(self, ctx, fn: Function, vector: str, rank: int) -> bool:
        """The body is `return make_V(a.x OP b.x, a.y OP b.y, ...);` (or `V{...}` / `{...}`), the
        components in order: what HIP's friend (`HIP_vector_type{x} OP= y`) computes."""
        names = [param_name(ctx.data, p) for p in fn.params]
        body = fn.node.child_by_field_name("body")
        if None in names or len(names) != 2 or body is None:
            return False
        a, b = names
        op = fn.name[len("operator"):]
        statements = [re.sub(r"\s+", "", ctx.data[s.start_byte:s.end_byte].decode("utf-8", "replace"))
                      for s in body.named_children if s.type != "comment"]
        parts = ",".join(f"{a}.{c}{op}{b}.{c}" for c in _COMPONENTS[:rank])
        return statements in ([f"returnmake_{vector}({parts});"], [f"return{vector}{{{parts}}};"],
                              [f"return{{{parts}}};"], [f"return{vector}({parts});"])

    def _componentwise(self, ctx, fn: Function, rank: int) -> bool:
        """The body is `a.c OP= b.c` (or `a.c = a.c OP b.c`; `++a.c` for increments) for each
        component once, and maybe `return a;`: what the member does (amd_hip_vector_types.h)."""
        names = [param_name(ctx.data, p) for p in fn.params]
        if None in names:
            return False
        op = fn.name[len("operator"):]
        a, b = names[0], names[1] if len(names) > 1 else None
        want = set()
        for c in _COMPONENTS[:rank]:
            if op in ("++", "--") and len(names) == 1:
                want.add(frozenset({f"{op}{a}.{c}", f"{a}.{c}{op}", f"{a}.{c}{op[0]}=1"}))
            elif b is not None and op.endswith("="):
                plain = op[:-1]
                want.add(frozenset({f"{a}.{c}{op}{b}.{c}", f"{a}.{c}={a}.{c}{plain}{b}.{c}"}))
            else:
                return False
        body = fn.node.child_by_field_name("body")
        if body is None:
            return False
        statements = [re.sub(r"\s+", "", ctx.data[s.start_byte:s.end_byte].decode("utf-8", "replace")).rstrip(";")
                      for s in body.named_children if s.type != "comment"]
        if statements and statements[-1] in (f"return{a}", f"return({a})", f"return*&{a}"):
            statements = statements[:-1]
        remaining = set(want)
        for s in statements:
            hit = next((w for w in remaining if s in w), None)
            if hit is None:
                return False
            remaining.discard(hit)
        return not remaining

    # -- functions HIP's headers define ----------------------------------------------------------

    def _function(self, ctx, fn: Function) -> None:
        types = [type_spelling(p, ctx.data, _name) for p in fn.params]
        for entry in self.functions[fn.name]:
            if entry["params"] == types and set(entry["spaces"]) & fn.spaces:
                break
        else:
            return
        spaces = " ".join(f"__{s}__" for s in entry["spaces"])
        sig = f"{fn.name}({', '.join(types)})"
        same = self._same_function(ctx, fn, types)
        why = f"HIP's headers define `{spaces} {sig}` ({entry['header']}): this is a redefinition"
        tail = ("; HIP's gives the same result for every argument" if same else
                "; HIP's may not compute what this one does: review before guarding it")
        # clang includes its HIP wrapper headers before the first line of every HIP compilation,
        # where only the compiler's own __HIP__ is defined yet
        guard = CLANG_GUARD if entry["header"].startswith("__clang_hip") else GUARD
        self._report(ctx, fn, sig, why + tail, same, f"HIP defines {sig} ({entry['header']})", guard)

    def _same_function(self, ctx, fn: Function, types: list[str]) -> bool:
        names = [param_name(ctx.data, p) for p in fn.params]
        body = fn.node.child_by_field_name("body")
        if None in names or body is None:
            return False
        statements = [re.sub(r"\s+", "", ctx.data[s.start_byte:s.end_byte].decode("utf-8", "replace"))
                      for s in body.named_children if s.type != "comment"]
        if fn.name in ("min", "max") and len(names) == 2 and types[0] == types[1] and types[0] in _INTEGERS:
            a, b = names
            lo, hi = (a, b) if fn.name == "min" else (b, a)
            forms = {f"return{a}<{b}?{lo}:{hi};", f"return({a}<{b})?{lo}:{hi};", f"return{b}>{a}?{lo}:{hi};",
                     f"return({b}>{a})?{lo}:{hi};", f"return{a}>{b}?{hi}:{lo};", f"return({a}>{b})?{hi}:{lo};"}
            return statements in ([f] for f in forms)
        m = re.match(r"make_(\w+)$", fn.name)
        if m and m.group(1) in self.vectors and len(names) == self.vectors[m.group(1)][1]:
            t = m.group(1)
            if len(statements) == 1 and statements[0] in (f"return{t}{{{','.join(names)}}};",
                                                          f"return{{{','.join(names)}}};"):
                return True
            if len(statements) == len(names) + 2 and re.fullmatch(rf"{t}(\w+);", statements[0]):
                r = re.fullmatch(rf"{t}(\w+);", statements[0]).group(1)
                return statements[1:-1] == [f"{r}.{c}={n};" for c, n in zip(_COMPONENTS, names)] and \
                    statements[-1] == f"return{r};"
        return False

    def _report(self, ctx, fn: Function, sig: str, reason: str, same: bool, note: str, guard: str = GUARD) -> None:
        span = line_span(ctx.data, definition_node(fn))
        edits = None
        if span is not None:
            start, end = span
            after = "#endif\n" if ctx.data[end - 1:end] == b"\n" else "\n#endif\n"
            edits = [Edit(start, start, f"{guard}  // cuda2hip: {note}\n"), Edit(end, end, after)]
        name = fn.name_node
        ctx.report(self, name.start_byte, name.end_byte, self.message(SIGNATURE=sig, REASON=reason), edits=edits,
                   applicability="safe" if same else "unsafe", description="Guard it out of the AMD build")


def _use(op: str, operands: int) -> str:
    sym = op[len("operator"):]
    if sym in ("++", "--"):
        return f"a{sym}" if operands else f"{sym}a"
    return f"a {sym} b"

