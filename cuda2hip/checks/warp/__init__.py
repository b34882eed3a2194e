"""Warps on 64-lane wavefronts (rules/warp, HIP40x): masks and intrinsics, the warp size."""

from . import intrinsics, warp_size, wavefront_macro  # noqa: F401
