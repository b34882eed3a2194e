"""Calls whose HIP form differs from CUDA's, from rules/api/data/forms/calls.json:

- HIP130: a kernel passed where HIP takes `const void*` (`hipFuncSetCacheConfig(kernel, ...)`:
  CUDA's template overload takes the kernel itself, HIP has only the C form);
- HIP137: the address of a typed pointer passed where HIP takes `void**` (`hipMallocPitch(&p, ...)`:
  CUDA's template overload takes any `T**`, HIP has only the C form);
- HIP131: an argument count HIP does not accept (CUDA default arguments HIP lacks:
  `cudaStreamWaitEvent(s, e)`, `cudaLaunchCooperativeKernel(k, g, b, args)`; signatures that
  changed: CUDA 13's `cudaGraphInstantiate(exec, graph)`).

Both match the CUDA and the HIP spelling of the function, so they work before and after the rename.
The `api-form-level` builder gives HIP132/HIP133 findings the severity their analysis chose.
"""

from __future__ import annotations

from functools import lru_cache

from ...api import forms as hip_forms
from ...engine.builders import BuiltFix, Match, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import API, Edit
from ...lang.cxx.expr_types import expression_type
from ...lang.cxx.syntax import call_args, callee_name, named, text
from ...lang.lazy_regex import LazyRegex

DATA = "calls"
_NULL = frozenset({"0", "NULL", "nullptr", "0L", "0UL"})
_VOID_POINTER = LazyRegex(r"(?:const\s+)?void\s*\*|void\s+const\s*\*")
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})


@lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[str, dict]]:
    """CUDA and HIP name -> (CUDA name, entry)."""
    out = {}
    for cuda, entry in hip_forms.load(DATA)["functions"].items():
        out.setdefault(cuda, (cuda, entry))
        out.setdefault(entry["hip"], (cuda, entry))
    return out


def _kernel_names() -> frozenset[str]:
    return frozenset(n for n, (_, e) in _by_name().items() if e["kernel_param"] is not None)


def _accepts(arities, n: int) -> bool:
    return any(lo <= n <= hi for lo, hi in arities)


def _call(node, ctx):
    """(callee name, CUDA name, entry, the row of the target's release, release, arguments)."""
    fn = node.child_by_field_name("function")
    if fn is not None and fn.type == "qualified_identifier" and not text(fn, ctx.data).startswith("::"):
        return None
    if fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    if fn is None or fn.type != "identifier":
        return None
    name = text(fn, ctx.data)
    got = _by_name().get(name)
    if got is None:
        return None
    cuda, entry = got
    facts = hip_forms.load(DATA)
    rel = hip_forms.release(facts, ctx.settings)
    row = entry["releases"].get(rel.rocm)
    if row is None:
        return None  # HIP has no such function there: the API tables' rules report the name
    return name, cuda, entry, row, rel, call_args(node)


def _arity(arities) -> str:
    spans = sorted({(lo, hi) for lo, hi in arities})
    words = [str(lo) if lo == hi else f"{lo} to {hi}" for lo, hi in spans]
    return " or ".join(words) + (" argument" if spans == [(1, 1)] else " arguments")


# ------------------------------------------------------------------------------ HIP130


def _is_void_pointer(arg, data: bytes) -> bool:
    """A null pointer constant or an expression already of type `void*` / `const void*`."""
    if text(arg, data).strip() in _NULL:
        return True
    if arg.type == "cast_expression":
        return bool(_VOID_POINTER.fullmatch(text(arg.child_by_field_name("type"), data).strip()))
    if arg.type == "call_expression":
        fn = arg.child_by_field_name("function")
        if fn is not None and fn.type == "template_function" and text(fn.child_by_field_name("name"), data) in _CASTS:
            inner = text(fn.child_by_field_name("arguments"), data).strip()[1:-1]
            return bool(_VOID_POINTER.fullmatch(inner.strip()))
    t = expression_type(arg, data)
    return t is not None and t.name == "void" and t.pointers == 1


def kernel_cast(node, ctx) -> tuple[str, Edit] | None:
    got = _call(node, ctx)
    if got is None:
        return None
    name, cuda, entry, row, rel, args = got
    i = entry["kernel_param"]
    if i is None or len(args) <= i:
        return None
    n = len(args)
    if not _accepts(row["arities"], n):
        pad = (row.get("pad") or {}).get(str(n))
        n += len(pad) if pad else 0  # what the call passes once HIP131 writes CUDA's defaults
    if _accepts(row.get("kernel_templates", ()), n):
        return None  # HIP has a template overload that takes the kernel itself
    arg = args[i]
    if _is_void_pointer(arg, ctx.data):
        return None
    old = text(arg, ctx.data)
    new = f"reinterpret_cast<const void*>({old})"
    hip = entry["hip"]
    msg = (f"HIP's `{hip}` takes the kernel as `const void*`: unlike CUDA's `{cuda}`, it has no overload that "
           f"takes the kernel itself ({rel.label()}); pass `{new}`")
    return msg, Edit(arg.start_byte, arg.end_byte, new)


@predicate("kernel-argument-cast", callees=_kernel_names())
def kernel_argument_cast(node, env, ctx, args):
    return kernel_cast(node, ctx) is not None


def _cast_fix(got, match: Match, ctx, description: str) -> BuiltFix | bool:
    """The fix of a (message, edit) that `kernel_cast` / `out_pointer_cast` found, with the API it is about."""
    if got is None:
        return False
    msg, edit = got
    return BuiltFix([edit], message=msg, description=description,
                    data={API: _by_name()[callee_name(match.node, ctx.data)][0]})


@fix_builder("kernel-argument-cast")
def kernel_argument_cast_fix(match: Match, ctx, rule) -> BuiltFix | bool:
    return _cast_fix(kernel_cast(match.node, ctx), match, ctx, "Cast the kernel to `const void*`")


# ------------------------------------------------------------------------------ HIP137


def _out_pointer_names() -> frozenset[str]:
    return frozenset(n for n, (_, e) in _by_name().items() if e.get("out_param") is not None)


def out_pointer_cast(node, ctx) -> tuple[str, Edit] | None:
    got = _call(node, ctx)
    if got is None:
        return None
    name, cuda, entry, row, rel, args = got
    i = entry.get("out_param")
    if i is None or len(args) <= i or _accepts(row.get("pointer_templates", ()), len(args)):
        return None
    arg = args[i]
    t = expression_type(arg, ctx.data)
    if text(arg, ctx.data).strip() in _NULL or (t is not None and t.name == "void" and t.pointers == 2):
        return None
    if arg.type == "cast_expression" or (arg.type == "call_expression" and callee_name(arg, ctx.data) in _CASTS):
        return None  # the code already chose the type it passes
    old = text(arg, ctx.data)
    new = f"reinterpret_cast<void**>({old})"
    hip = entry["hip"]
    msg = (f"HIP's `{hip}` takes `void**`: unlike CUDA's `{cuda}`, whose template overload passes any `T**` on as "
           f"`(void**)(void*)`, it has no overload for other pointer types ({rel.label()}); pass `{new}`")
    return msg, Edit(arg.start_byte, arg.end_byte, new)


@predicate("out-pointer-cast", callees=_out_pointer_names())
def out_pointer_cast_check(node, env, ctx, args):
    return out_pointer_cast(node, ctx) is not None


@fix_builder("out-pointer-cast")
def out_pointer_cast_fix(match: Match, ctx, rule) -> BuiltFix | bool:
    return _cast_fix(out_pointer_cast(match.node, ctx), match, ctx, "Cast the pointer's address to `void**`")


# ------------------------------------------------------------------------------ HIP139


@lru_cache(maxsize=1)
def _overloaded() -> dict[str, tuple[str, dict]]:
    """CUDA and HIP name -> (CUDA name, entry) of functions CUDA declares once and HIP overloads."""
    out = {}
    for cuda, entry in hip_forms.load(DATA).get("overloaded", {}).items():
        out.setdefault(cuda, (cuda, entry))
        out.setdefault(entry["hip"], (cuda, entry))
    return out


def _overloaded_words() -> tuple[str, ...]:
    return tuple(sorted(_overloaded()))


@predicate("overloaded-function-address", requires=_overloaded_words())
def overloaded_function_address(node, env, ctx, args):
    """`(void*)&hipMalloc`, `(void*)cuMemAlloc`: on a cast to an object pointer, the only place
    the overload stays unresolved (a call, a typed function pointer, a parameter of function-pointer
    type each pick one; a macro argument may not be an address at all). Adds $NAME, $HIP, $CUDA."""
    data = ctx.data
    target = " ".join(text(node.child_by_field_name("type"), data).split())
    if "(" in target or "*" not in target:
        return False
    value = node.child_by_field_name("value")
    while value is not None and value.type == "parenthesized_expression" and len(named(value)) == 1:
        value = named(value)[0]
    if value is not None and value.type == "pointer_expression" and text(value.child_by_field_name("operator"), data) == "&":
        value = value.child_by_field_name("argument")
    while value is not None and value.type == "parenthesized_expression" and len(named(value)) == 1:
        value = named(value)[0]
    if value is None or value.type != "identifier":
        return False
    got = _overloaded().get(text(value, data))
    if got is None:
        return False
    cuda, entry = got
    rel = hip_forms.release(hip_forms.load(DATA), ctx.settings)
    if rel.rocm not in entry["releases"]:
        return False
    return {"NAME": capture(value, data), "HIP": capture(value, data, entry["hip"]), "CUDA": capture(value, data, cuda)}


# ------------------------------------------------------------------------------ HIP131


def argument_count(node, ctx) -> tuple[str, list[Edit] | None] | None:
    got = _call(node, ctx)
    if got is None:
        return None
    name, cuda, entry, row, rel, args = got
    n = len(args)
    if _accepts(row["arities"], n):
        return None
    hip = entry["hip"]
    facts = hip_forms.load(DATA)
    passes = f"HIP's `{hip}` takes {_arity(row['arities'])} ({rel.label()}{hip_forms.approximate(rel, facts)}), " \
             f"this call passes {n}"
    pad = (row.get("pad") or {}).get(str(n))
    instead = (row.get("instead") or {}).get(str(n))
    if not pad and instead:
        fn = node.child_by_field_name("function")
        fn = fn.child_by_field_name("name") if fn.type == "qualified_identifier" else fn
        return (f"{passes}: CUDA's `{cuda}` with {n} arguments calls the function HIP names `{instead}`; call "
                "that", [Edit(fn.start_byte, fn.end_byte, instead)])
    if not pad:
        return (f"{passes}: CUDA {facts['cuda']} and HIP declare `{cuda}` differently; port this call by hand",
                None)
    at = args[-1].end_byte if args else node.child_by_field_name("arguments").start_byte + 1
    added = ", ".join(pad)
    edit = Edit(at, at, (", " if args else "") + added)
    return f"{passes}: write CUDA's default for the rest (`{added}`)", [edit]


@predicate("argument-count-differs", callees=frozenset(_by_name()))
def argument_count_differs(node, env, ctx, args):
    return argument_count(node, ctx) is not None


@fix_builder("argument-count-defaults")
def argument_count_defaults(match: Match, ctx, rule) -> BuiltFix | bool:
    got = argument_count(match.node, ctx)
    if got is None:
        return False
    msg, edits = got
    api = {API: _by_name()[callee_name(match.node, ctx.data)][0]}
    if edits is None:
        return BuiltFix(None, message=msg, effort="medium", data=api)
    return BuiltFix(edits, message=msg, description="Write CUDA's default arguments", data=api)


# ------------------------------------------------------------------------------ HIP132, HIP133


@fix_builder("api-form-level")
def api_form_level(match: Match, ctx, rule) -> BuiltFix:
    """No fix; the severity the rule's predicate chose ($LEVEL), the API it is about ($FN)."""
    api = match.env.get("FN")
    return BuiltFix(None, severity=match.env["LEVEL"].text, data={API: api.text} if api else {})

