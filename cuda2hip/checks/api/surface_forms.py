"""HIP147: surface reads and writes given a boundary mode (`surf2Dwrite(v, surf, x, y,
cudaBoundaryModeTrap)`). CUDA's surface functions take an optional boundary mode; HIP 5.2's took
it and ignored it, HIP 5.7 and later (amd_surface_functions.h) have no such parameter, so the call
no longer compiles."""

from __future__ import annotations

from ...api.tables import version_tuple
from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import call_args, callee, text

# HIP's parameter count (data or data pointer, surface object, coordinates), the same in every
# release; a call with one argument more passes CUDA's boundary mode.
HIP_ARITY = {
    "surf1Dread": 3, "surf1Dwrite": 3, "surf2Dread": 4, "surf2Dwrite": 4, "surf3Dread": 5, "surf3Dwrite": 5,
    "surf1DLayeredread": 4, "surf1DLayeredwrite": 4, "surf2DLayeredread": 5, "surf2DLayeredwrite": 5,
    "surfCubemapread": 5, "surfCubemapwrite": 5, "surfCubemapLayeredread": 6, "surfCubemapLayeredwrite": 6,
}
# The first release whose headers lack the parameter (Debian trixie's HIP 5.7; bookworm's 5.2 has it).
DROPPED_FROM = version_tuple("5.7")
# Out-of-range stores are dropped and loads give zero on AMD's image instructions: the mode that
# asks for exactly that is the one whose removal changes nothing.
_ZERO = frozenset({"cudaBoundaryModeZero", "hipBoundaryModeZero"})


def _extra_mode(node, ctx):
    fn = callee(node)
    arity = HIP_ARITY.get(text(fn, ctx.data)) if fn is not None else None
    args = call_args(node)
    return args[-1] if arity is not None and len(args) == arity + 1 else None


@predicate("surface-boundary-mode", callees=tuple(HIP_ARITY))
def surface_boundary_mode(node, env, ctx, args):
    """A surface call with CUDA's boundary-mode argument, at a target whose HIP lacks it. Adds $MODE."""
    t = ctx.settings.target_rocm
    if t is not None and version_tuple(t) < DROPPED_FROM:
        return False
    mode = _extra_mode(node, ctx)
    return {"MODE": capture(mode, ctx.data)} if mode is not None else False


@fix_builder("drop-boundary-mode")
def drop_boundary_mode(match, ctx, rule):
    """Remove the boundary-mode argument: safe for the zero mode (what AMD's image instructions do
    out of range), unsafe for trap and clamp (out-of-range accesses no longer trap or clamp)."""
    mode = _extra_mode(match.node, ctx)
    if mode is None:
        return BuiltFix(None)
    prev = call_args(match.node)[-2]
    edit = Edit(prev.end_byte, mode.end_byte, "")
    if text(mode, ctx.data) in _ZERO:
        return BuiltFix([edit], description="Remove the boundary mode")
    return BuiltFix([edit], applicability="unsafe",
                    description="Remove the boundary mode (out-of-range accesses are then neither trapped nor clamped)")
