"""HIP143: calls of runtime / driver API functions whose HIP name the targeted release's headers
mark deprecated (`[[deprecated]]` / `__attribute__((deprecated))` on the declaration: texture
references, `hipMemcpyToArray` / `hipMemcpyFromArray`, the `hipCtx*` context API, ...). The
facts come from each release's AST of hip/hip_runtime.h (rules/api/collisions/hip-definitions*.json,
tools/generate_hip_definitions_data.py), with the header's own deprecation message."""

from __future__ import annotations

from functools import lru_cache

from ..api_tables import as_entry, table_rows
from ..hip_collisions import load, release_for
from ..predicates import predicate
from .cuda_ast import capture, text

TABLES = ("runtime.json", "driver.json")


@lru_cache(maxsize=4)
def deprecated(release: str) -> dict[str, str]:
    """HIP function name -> the header's deprecation message, at `release`."""
    out: dict[str, str] = {}
    for name, entries in load(release)["functions"].items():
        for e in entries:
            if "deprecated" in e:
                out[name] = e["deprecated"]
    return out


@lru_cache(maxsize=1)
def _hip_names() -> dict[str, str]:
    """CUDA runtime / driver function -> its HIP name, for the names some release deprecates."""
    from ...rulebook.loader import builtin_rules_dir

    wanted = set()
    for release in ("5.2", "6.4", "7.2"):
        wanted.update(deprecated(release))
    out: dict[str, str] = {}
    data = builtin_rules_dir() / "api" / "data"
    for table in TABLES:
        for cuda, row in table_rows(str(data / table)).items():
            entry = as_entry(row)
            if entry.hip in wanted:
                out[cuda.decode() if isinstance(cuda, bytes) else cuda] = entry.hip
    return out


@predicate("hip-api-deprecated", requires=("cu", "hip"))
def hip_api_deprecated(node, env, ctx, args):
    """A call of a function whose HIP name the target's headers deprecate. Adds $NAME, $HIP,
    $ROCM and $WHY."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "identifier":
        return False
    name = text(fn, ctx.data)
    hip = name if name.startswith("hip") else _hip_names().get(name)
    if hip is None:
        return False
    release = release_for(ctx.settings.target_rocm)
    why = deprecated(release).get(hip)
    if why is None:
        return False
    becomes = f"`{name}` becomes `{hip}`, which" if hip != name else f"`{name}`:"
    return {"NAME": capture(fn, ctx.data), "HIP": capture(fn, ctx.data, becomes),
            "ROCM": capture(fn, ctx.data, ctx.settings.target_rocm or release),
            "WHY": capture(fn, ctx.data, why.rstrip(".") or "no reason given")}
