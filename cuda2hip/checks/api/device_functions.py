"""CUDA device functions that HIP does not declare at the target (`__ldcs(p)` on a `float*`,
`atomicInc_system`, `__nanosleep`, `__fadd_rd` without -DOCML_BASIC_ROUNDED_OPERATIONS), from
rules/api/data/forms/device-functions.json: a finding at every call.

Left to other rules: names whose table row HIP102 reports (no HIP equivalent, or one that needs a
newer ROCm), CUDA-looking names no table knows (HIP190), and the `_sync` warp functions (HIP403). Names that do not look like CUDA's (`umin`,
`all`) count only in device code, where the file does not define them itself.

The functions HIP declares in no checked release whose behaviour is plain integer arithmetic (the
SIMD intrinsics `__vsub4`, `__vcmpne4`, ...: rules/api/data/device-polyfills.yaml) are reported here
rather than by HIP102, with a fix that defines CUDA's function in the calling file. A project's own
overload of a CUDA function (`__ldcs(const float6*)` for a struct of its own) covers the calls
with its parameter types only: the other calls are still CUDA's, and reported as such.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ...engine.builders import BuiltFix, Match, fix_builder
from ...findings import API, Edit
from ...api import forms as hip_forms
from ...api.tables import as_entry
from ...api.warp import MASKED
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.definitions import file_definitions
from ...lang.cxx.expr_types import expression_type, type_name
from ...lang.cxx.functions import file_definitions as function_definitions
from ...lang.cxx.includes import included_definitions_of
from ...lang.cxx.syntax import call_args, enclosing_function, function_body, text
from ...lang.lazy_regex import LazyRegex
from .leftovers import all_table_entries
from .rename import CUDA_LOOKING, resolve_for

DATA = "device-functions"
_WARP_RULES = MASKED | {"__activemask"}  # HIP403 reports them, with the ROCm versions that have them
_CUDA_SPELLED = LazyRegex(r"__|atomic|cuda")
_SHOWN = 4  # parameter lists a message names


@lru_cache(maxsize=1)
def polyfills() -> dict[str, dict]:
    """CUDA function -> {what, code}: the definitions HIP133's fix writes."""
    from ...rulebook.data_files import load_data
    from ...rulebook.loader import builtin_rules_dir

    return load_data(str(Path(builtin_rules_dir()) / "api" / "data" / "device-polyfills.yaml"))


@lru_cache(maxsize=1)
def _functions() -> dict[str, list]:
    return {n: row for n, row in hip_forms.load(DATA)["functions"].items() if n not in _WARP_RULES}


def _in_device_code(node, data: bytes) -> bool:
    fn = enclosing_function(node)
    if fn is None:
        return False
    body = function_body(fn)
    head = data[fn.start_byte:body.start_byte if body is not None else fn.end_byte]
    return b"__device__" in head or b"__global__" in head


def _left_to_tables(name: str, ctx) -> bool:
    """HIP102 reports the name (its table row has no HIP name at the target), HIP104 renames it (the
    row's HIP name differs), or HIP190 reports it (a CUDA-looking name no table knows: `__nv_*`,
    `__cuda*`, `cudaCG*`)."""
    entry = all_table_entries().get(name.encode())
    if entry is None:
        return CUDA_LOOKING.match(name.encode()) is not None
    # (a target of another name: HIP104 renames the call to what HIP has, `__trap` -> `__builtin_trap`)
    return resolve_for(as_entry(entry), ctx.settings).target != name


def _plain(t: str) -> str:
    """`const long long*` -> `long long*` (an argument of type `T*` binds to `const T*`)."""
    return " ".join(re.sub(r"\b(?:const|volatile)\b", " ", t).split()).replace(" *", "*").replace(" &", "&")


def _template_parameters(node, data: bytes) -> frozenset[str]:
    """The type parameters of the templates around `node` (`T` of `template <class T>`)."""
    out = set()
    cur = node.parent
    while cur is not None:
        if cur.type == "template_declaration":
            params = cur.child_by_field_name("parameters")
            for p in (params.named_children if params is not None else ()):
                if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                    out.update(text(c, data) for c in p.named_children if c.type == "type_identifier")
        cur = cur.parent
    return frozenset(out)


def _overloads(sigs: list[list[str]]) -> str:
    shown = ", ".join("`(" + ", ".join(s) + ")`" for s in sigs[:_SHOWN])
    return shown + (f" and {len(sigs) - _SHOWN} more" if len(sigs) > _SHOWN else "")


def _own_overloads(name: str, ctx) -> list[list[str]] | None:
    """The parameter types (`["float6*"]`) of the file's own functions named `name`; None when
    the file defines the name otherwise (a macro, a variable, a function of an included header)
    or a parameter's type does not show (then every call counts as the project's)."""
    raw = name.encode()
    if raw in included_definitions_of(ctx):
        return None
    if raw not in file_definitions(ctx):
        return []
    own = []
    for d in function_definitions(ctx):
        if d.name != name:
            continue
        sig = []
        for p in d.decl.child_by_field_name("parameters").named_children:
            base = type_name(p.child_by_field_name("type"), ctx.data) if p.type == "parameter_declaration" else None
            if base is None:
                return None
            decl = p.child_by_field_name("declarator")
            stars = text(decl, ctx.data).count("*") if decl is not None else 0
            sig.append(base + "*" * stars)
        own.append(sig)
    return own or None


def _inside_own(node, name: str, ctx) -> bool:
    fn = enclosing_function(node)
    decl = fn.child_by_field_name("declarator") if fn is not None else None
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    return decl is not None and text(decl.child_by_field_name("declarator"), ctx.data) == name


def _partial(name: str, status: dict, node, ctx, rel, facts, own: list[list[str]]) -> tuple[str, str] | None:
    """A function HIP declares for some of CUDA's parameter types only (and the file, maybe, for
    some types of its own)."""
    args = call_args(node)
    generic = _template_parameters(node, ctx.data)
    known = [None if k is not None and k.name in generic else k  # (`T` of a template: any type)
             for k in (expression_type(a, ctx.data) for a in args)]
    if own:
        if any(len(sig) == len(known) and all(k is not None and t == k.spelled() for t, k in zip(sig, known))
               for sig in own):
            return None  # a call to the file's own overload
        if any(k is None for k in known) and not _inside_own(node, name, ctx):
            return None  # one that may be; inside the overload itself, a call is to CUDA's (no recursion)

    def fits(sig: list[str]) -> bool | None:
        if len(sig) != len(args):
            return False
        compared = [(t, k) for t, k in zip(sig, known) if k is not None and t.endswith(("*", "&"))]
        if not compared:
            return None
        return all(_plain(t).rstrip("&") == k.spelled() for t, k in compared)

    label = f"{rel.label()}{hip_forms.approximate(rel, facts)}"
    has = f"HIP ({label}) declares `{name}` only for {_overloads(status['has'])}"
    if any(fits(s) for s in status["has"]):
        return None
    for sig in status["lacks"]:
        if fits(sig):
            return f"{has}, not for `({', '.join(sig)})`", "error" if rel.exact else "warning"
    if (any(k is not None for k in known) or len(status["lacks"]) <= len(status["has"])
            or not any(len(s) == len(args) for s in status["lacks"])):
        return None  # a type the comparison does not cover, HIP has most of CUDA's overloads, or no arity fits
    return (f"{has}; CUDA also has {_overloads(status['lacks'])}: the argument's type is not visible here, "
            "check it", "warning")


def _unseen(name: str, status: dict, node, ctx, rel, facts) -> tuple[str, str] | None:
    """A call of a function HIP has some of CUDA's overloads of, whose arguments show no type
    of HIP's overloads (a template's `T`, a member): None where one argument has such a type."""
    generic = _template_parameters(node, ctx.data)
    hip_types = {_plain(t).rstrip("&") for sig in status["has"] for t in sig}
    for a in call_args(node):
        k = expression_type(a, ctx.data)
        if k is not None and k.name not in generic and k.spelled() in hip_types:
            return None
    return (f"HIP ({rel.label()}{hip_forms.approximate(rel, facts)}) declares `{name}` only for "
            f"{_overloads(status['has'])}; CUDA also has {_overloads(status['lacks'])}, and the arguments' types "
            "are not visible here", "warning")


def _analyse(node, ctx) -> tuple[str, str] | None:
    fn = node.child_by_field_name("function")
    if fn is not None and fn.type == "qualified_identifier" and fn.child_by_field_name("scope") is None \
            and text(fn, ctx.data).startswith("::") and text(fn, ctx.data)[2:] in polyfills():
        fn = fn.child_by_field_name("name")  # `::sincos(x, &s, &c)`: the global function
    if fn is None or fn.type != "identifier":
        return None
    name = text(fn, ctx.data)
    row = _functions().get(name)
    if row is None:
        return None
    own = _own_overloads(name, ctx)
    if own is None:
        return None  # the project's own function of that name
    if not _CUDA_SPELLED.match(name) and not _in_device_code(node, ctx.data):
        return None
    header, statuses = row
    facts = hip_forms.load(DATA)
    rel = hip_forms.release(facts, ctx.settings)
    status = statuses[rel.index]
    if status is None:
        return None
    opt_in_only = isinstance(status, str) and status.startswith("-D")
    if name in polyfills() and not own and isinstance(status, dict) and _in_device_code(node, ctx.data) and all(
            isinstance(s, dict) and polyfills()[name]["lacks"] in s["lacks"] for s in statuses):
        # (not where the file has overloads of its own, the polyfill's among them; adding the
        # overload never changes a call HIP's overloads take: its pointer parameters
        # accept no other pointer type)
        got = _partial(name, status, node, ctx, rel, facts, own) or _unseen(name, status, node, ctx, rel, facts)
        return None if got is None else (f"{got[0]}; the fix defines {polyfills()[name]['what']} in this file",
                                         "error", name)
    if name in polyfills() and not own and all(s == "no" for s in statuses) and _in_device_code(node, ctx.data):
        # (no release has it, so a definition of the file's own collides with none)
        return (f"`{name}` (CUDA `{header}`) is not declared by HIP in {rel.label()} nor in any checked "
                f"release ({hip_forms.checked(facts)}); the fix defines it in this file as CUDA does "
                f"({polyfills()[name]['what']})", "error", name)
    if not opt_in_only and _left_to_tables(name, ctx):
        return None  # (an opt-in macro is news to HIP102's "no HIP equivalent": this finding supersedes it)
    if isinstance(status, dict):
        return _partial(name, status, node, ctx, rel, facts, own)
    if own:
        return None  # (a function HIP lacks altogether: the file's overloads are its own port)
    approx = hip_forms.approximate(rel, facts)
    if status.startswith("-D"):
        return (f"`{name}` (CUDA `{header}`): HIP ({rel.label()}) declares it only when compiled with "
                f"`{status}`{approx}", "warning")
    later = hip_forms.first_with(facts, statuses, rel, lambda s: s is None or isinstance(s, dict))
    opt_in = hip_forms.first_with(facts, statuses, rel, lambda s: isinstance(s, str) and s.startswith("-D"))
    if later:
        where = f"HIP {later}'s headers declare it"
    elif opt_in:
        where = f"HIP {opt_in} declares it with `{statuses[facts['releases'].index(opt_in)]}`"
    else:
        where = f"no checked HIP release declares it ({hip_forms.checked(facts)})"
    return (f"`{name}` (CUDA `{header}`) is not declared by HIP in {rel.label()}{approx}; {where}",
            "error" if rel.exact or not (later or opt_in) else "warning")


@predicate("device-function-missing", callees=frozenset(_functions()) | {"::" + n for n in _functions()})
def device_function_missing(node, env, ctx, args):
    got = _analyse(node, ctx)
    if got is None:
        return False
    env = {"WHY": capture(node, ctx.data, got[0]), "LEVEL": capture(node, ctx.data, got[1]),
           "FN": capture(node.child_by_field_name("function"), ctx.data)}
    if len(got) > 2:
        env["POLYFILL"] = capture(node, ctx.data, got[2])
    return env


def _guard(name: str) -> str:
    return "HAVE_CUDA2HIP_" + name.strip("_").upper()  # (a name HIP190 does not take for CUDA's)


def polyfill_point(node) -> int:
    """Where a definition used by `node` goes: the start of the file-scope declaration that holds
    it, inside an include guard (`#ifndef X` + `#define X`) but before any other `#if` (a
    definition in one branch would hide the call in another from the next pass)."""
    top = node
    while top.parent is not None and top.parent.type != "translation_unit":
        top = top.parent
    while top.type == "preproc_ifdef" and _is_include_guard(top):
        inner = next((c for c in top.named_children if c.start_byte <= node.start_byte < c.end_byte
                      and c.type not in ("identifier", "preproc_def")), None)
        if inner is None:
            break
        top = inner
    return top.start_byte


def _first_call(node, name: str, data: bytes):
    """The file's first call of `name` (`node` is one): every call's fix then writes the
    definition at the same point, which the fix loop applies once."""
    root = node
    while root.parent is not None:
        root = root.parent
    for m in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\s*\(", data):
        if m.start() >= node.start_byte:
            break
        found = root.descendant_for_byte_range(m.start(), m.start() + len(name))
        if found is not None and found.type == "identifier" and found.parent is not None \
                and found.parent.type == "qualified_identifier":
            found = found.parent  # `::sincos(...)`
        if found is not None and found.type in ("identifier", "qualified_identifier") and found.parent is not None \
                and found.parent.type == "call_expression":
            return found.parent
    return node


def _is_include_guard(node) -> bool:
    name = node.child_by_field_name("name")
    first = next((c for c in node.named_children if c.type not in ("identifier", "comment")), None)
    return (name is not None and node.children[0].type == "#ifndef" and first is not None
            and first.type == "preproc_def" and first.child_by_field_name("name") is not None
            and first.child_by_field_name("name").text == name.text)


@fix_builder("device-function-polyfill")
def device_function_polyfill(match: Match, ctx, rule) -> BuiltFix:
    """HIP133: no fix ($LEVEL, the API $FN), or, for a function of device-polyfills.yaml ($POLYFILL),
    CUDA's definition before the file-scope declaration that calls it, behind a guard macro so that
    the copies of several migrated headers in one translation unit define it once."""
    api = match.env.get("FN")
    data = {API: api.text} if api else {}
    level = match.env["LEVEL"].text
    name = match.env["POLYFILL"].text if "POLYFILL" in match.env else None
    if name is None:
        return BuiltFix(None, severity=level, data=data)
    pf, guard = polyfills()[name], _guard(name)
    at = polyfill_point(_first_call(match.node, name, ctx.data))
    body = (f"// cuda2hip: CUDA's {name} ({pf['what']}), which HIP does not declare\n"
            f"#ifndef {guard}\n#define {guard}\n{pf['code'].rstrip()}\n#endif\n\n")
    return BuiltFix([Edit(at, at, body)], applicability="safe",
                    severity=level, description=f"Define CUDA's `{name}`", data=data)

