"""HIP143: calls of HIP runtime / driver API functions that the targeted release's headers mark
deprecated (`[[deprecated]]` / `__attribute__((deprecated))` on the declaration: texture
references, `hipMemcpyToArray` / `hipMemcpyFromArray`, the `hipCtx*` context API, ...). The
facts come from each release's AST of hip/hip_runtime.h (rules/api/collisions/hip-definitions*.json,
tools/generate_hip_definitions_data.py), with the header's own deprecation message. CUDA code
gets the finding once the rename has written the HIP name (after `fix`): before, the rename rule's
finding is the one for the call."""

from __future__ import annotations

from functools import lru_cache

from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.syntax import text
from .hip_collisions import load, release_for

@lru_cache(maxsize=4)
def deprecated(release: str) -> dict[str, str]:
    """HIP function name -> the header's deprecation message, at `release`."""
    out: dict[str, str] = {}
    for name, entries in load(release)["functions"].items():
        for e in entries:
            if "deprecated" in e:
                out[name] = e["deprecated"]
    return out


@predicate("hip-api-deprecated", requires=("hip", "atomicAddNoRet"))
def hip_api_deprecated(node, env, ctx, args):
    """A call of a HIP function the target's headers deprecate. Adds $NAME, $ROCM and $WHY."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "identifier":
        return False
    name = text(fn, ctx.data)
    release = release_for(ctx.settings.target_rocm)
    why = deprecated(release).get(name)
    if why is None:
        return False
    return {"NAME": capture(fn, ctx.data),
            "ROCM": capture(fn, ctx.data, ctx.settings.target_rocm or release),
            "WHY": capture(fn, ctx.data, why.rstrip(".") or "no reason given")}
