"""The AMD GPU targets of a migration. CUDA architectures (sm_80, compute_70) name NVIDIA
hardware; which AMD GPU a project moves to is the user's choice, so build rules rewrite them only
with targets given as `--offload-arch` / `[tool.cuda2hip.build] offload-arch`."""

from __future__ import annotations

from ..lang.lazy_regex import LazyRegex

# clang's HIP target ID: a processor plus optional features (gfx90a:xnack+, gfx942:sramecc-)
OFFLOAD_ARCH = LazyRegex(r"^gfx[0-9a-f]+(:[a-z0-9_-]+[+-])*$")


def offload_archs(settings) -> list[str]:
    build = (settings.extra or {}).get("build") or {}
    value = build.get("offload-arch") or []
    if isinstance(value, str):
        value = [value]
    return [a.strip() for v in value for a in str(v).split(",") if a.strip()]
