"""Fields of CUDA structs that the HIP struct of the same role lacks at the target
(`prop.asyncEngineCount` on a `cudaDeviceProp` / `hipDeviceProp_t` with --target-rocm 5.2), from
rules/api/data/forms/struct-fields.json.

A member access is judged by the type the file shows for its object (a variable or parameter
declared as the CUDA struct, its HIP name, a pointer or an array of it; nested members such as
`desc.res.linear.devPtr` follow the struct). Where the file shows another type, it is not a
CUDA struct's field. Where it shows none (a call's result, a member of a project's struct, `auto`),
only field names that a project is unlikely to use for its own structs are reported, and the
finding says that the type was not visible.

Cooperative groups' classes count too (`tile.meta_group_rank()` on a `cg::thread_block_tile<32>`
with --target-rocm 5.2): their members are in the data under the class's qualified name, and the
class is read by cg_types (aliases, `using`, `auto` made by `tiled_partition<N>`). A member HIP
declares only behind an opt-in macro ("6.4 -DHIP_ENABLE_WARP_SYNC_BUILTINS") is a warning from
that release on.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...api import forms as hip_forms
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.cg_types import class_name, names_namespace, variable_class
from ...lang.cxx.expr_types import expression_type
from ...lang.cxx.syntax import text

DATA = "struct-fields"


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, str], frozenset[str]]:
    """(type name -> CUDA struct, for the CUDA, HIP and HIP record names; every field name some
    path of the data starts or ends with)."""
    structs = hip_forms.load(DATA)["structs"]
    by_name: dict[str, str] = {}
    words: set[str] = set()
    for cuda, entry in structs.items():
        for name in (cuda, entry["hip"], *entry["records"].values()):
            by_name.setdefault(name, cuda)
        for path in entry["fields"]:
            parts = path.split(".")
            words.update((parts[0], parts[-1]))
    return by_name, frozenset(words)


# A project's own structs have fields like `type`, `flags`, `size`, `event`, `maxSize`; CUDA's
# device properties have `asyncEngineCount`, `maxTexture1DLayered`: camelCase names of several
# words are reported even where the object's type is not visible.
_DISTINCTIVE = re.compile(r"[a-z][a-z0-9]*(?:[A-Z0-9]+[a-z0-9]*){2,}|[a-z][a-z0-9]*[A-Z]\w{9,}")


def _lacking(entry: dict, path: str, rel: hip_forms.Release, releases: list[str]) -> tuple[bool, str | None]:
    """(whether the HIP struct lacks `path` at `rel`, the checked release that has it: "ROCM" or
    "ROCM -DNAME" where it takes that opt-in macro). Not where HIP has no such struct at all: the
    API tables' rules report the type."""
    if path not in entry["fields"] or rel.rocm not in entry["records"]:
        return False, None
    since = entry["fields"][path]
    if since is not None and " " not in since and releases.index(since) <= rel.index:
        return False, since
    return True, since


def _opt_in_at(since: str | None, rel: hip_forms.Release, releases: list[str]) -> str | None:
    """The `-DNAME` that declares the member at `rel` (`since`: "ROCM -DNAME"), if any."""
    if since is None or " " not in since:
        return None
    rocm, opt = since.split(" ", 1)
    return opt if releases.index(rocm) <= rel.index else None


def _struct_of(base, known, data: bytes, by_name: dict[str, str]) -> str | None:
    """The data's struct or class of the object `base` (of declared type `known`, if shown)."""
    if known is not None:
        return by_name.get(known.name) or by_name.get(class_name(known.name, data) or "")
    if base is not None and base.type == "identifier":
        return by_name.get(variable_class(base, data) or "")
    return None


def _chain(node) -> tuple[list[str], object]:
    """(field names from the base object outwards, the base object) of `a.b->c`."""
    parts = []
    while node is not None and node.type == "field_expression":
        parts.append(node)
        node = node.child_by_field_name("argument")
    return parts[::-1], node


@lru_cache(maxsize=1)
def _owners() -> dict[str, tuple[tuple[str, ...], bool]]:
    """Field name -> (the names of the structs with a field path ending in it, whether one of
    them is a cooperative-groups class)."""
    structs = hip_forms.load(DATA)["structs"]
    names: dict[str, set[str]] = {}
    classes: set[str] = set()
    for cuda, entry in structs.items():
        for path in entry["fields"]:
            last = path.rsplit(".", 1)[-1]
            names.setdefault(last, set()).update(n for n in (cuda, entry["hip"], *entry["records"].values())
                                                 if "::" not in n)
            if "::" in cuda:
                classes.add(last)
    return {last: (tuple(sorted(owners)), last in classes) for last, owners in names.items()}


def _owner_spelled(name: str, ctx) -> bool:
    """Whether the file spells a struct or class with a field path ending in `name` (once per
    file and name). Where it spells none, no type it shows is one that reports `name`."""
    cache = ctx.file_cache.setdefault("struct-fields:owners", {})
    got = cache.get(name)
    if got is None:
        data = ctx.file_context.data
        owners, cg_class = _owners().get(name, ((), False))
        got = cache[name] = (cg_class and names_namespace(data)) or any(o.encode() in data for o in owners)
    return got


def _analyse(node, ctx):
    """(message, severity, the field as `cudaStruct.field`) for a member access of a field HIP lacks at the target, else None."""
    data = ctx.data
    field = node.child_by_field_name("field")
    by_name, words = _index()
    name = text(field, data)
    if name not in words or not (_owner_spelled(name, ctx) or _DISTINCTIVE.fullmatch(name)):
        return None
    facts = hip_forms.load(DATA)
    structs, releases = facts["structs"], facts["releases"]
    rel = hip_forms.release(facts, ctx.settings)
    chain, base = _chain(node)
    names = [text(f.child_by_field_name("field"), data) for f in chain]
    known = expression_type(base, data)
    cuda = _struct_of(base, known, data, by_name)
    if known is not None or cuda is not None:
        if cuda is None:
            if len(chain) == 1:
                return None  # the file shows another type: a project's field
            return _unknown(node, ctx, name, rel, facts)  # a member of a project's struct
        entry = structs[cuda]
        path = ".".join(names)
        for k in range(1, len(names)):
            if _lacking(entry, ".".join(names[:k]), rel, releases)[0]:
                return None  # reported at the shorter path
        lacks, since = _lacking(entry, path, rel, releases)
        if not lacks:
            return None
        hip, what = entry["hip"], "member" if "::" in cuda else "field"
        named = f"`{hip}`" + (f" (CUDA's `{cuda}`)" if hip != cuda else "")
        approx = hip_forms.approximate(rel, facts)
        opt = _opt_in_at(since, rel, releases)
        if opt:
            return (f"{named} declares the {what} `{path}` in {rel.label()} only when compiled with `{opt}`"
                    f"{approx}", "warning", f"{cuda}.{path}")
        msg = f"{named} has no {what} `{path}` in {rel.label()}{_since(since, facts)}{approx}"
        return msg, "error" if rel.exact else "warning", f"{cuda}.{path}"
    return _unknown(node, ctx, name, rel, facts)


def _unknown(node, ctx, name: str, rel, facts) -> tuple[str, str] | None:
    if not _DISTINCTIVE.fullmatch(name):
        return None
    hits = [(cuda, entry) for cuda, entry in facts["structs"].items() if "::" not in cuda
            if _lacking(entry, name, rel, facts["releases"])[0]]
    if not hits:
        return None
    cuda, entry = hits[0]
    since = _lacking(entry, name, rel, facts["releases"])[1]
    obj = text(node.child_by_field_name("argument"), ctx.data)
    msg = (f"`{name}` is a field of CUDA's `{cuda}` that `{entry['hip']}` lacks in {rel.label()}"
           f"{_since(since, facts)}{hip_forms.approximate(rel, facts)}; the type of `{obj}` is not visible "
           "here: check it")
    return msg, "warning", f"{cuda}.{name}"


def _since(since: str | None, facts: dict) -> str:
    if since and " " in since:
        rocm, opt = since.split(" ", 1)
        return f" (HIP {rocm}'s headers declare it with `{opt}`)"
    if since:
        return f" (HIP {since}'s headers declare it)"
    return f" (no checked HIP release declares it: {hip_forms.checked(facts)})"


@predicate("struct-field-missing", requires=tuple(sorted(_index()[1])))
def struct_field_missing(node, env, ctx, args):
    got = _analyse(node, ctx)
    if got is None:
        return False
    return {"WHY": capture(node, ctx.data, got[0]), "LEVEL": capture(node, ctx.data, got[1]),
            "FN": capture(node, ctx.data, got[2])}

