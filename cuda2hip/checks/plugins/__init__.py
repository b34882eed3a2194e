"""Python predicates and fix builders used by YAML rules, one topic per module. A run imports
only the modules whose names its compiled rules use (importing them all costs a pre-commit call
several ms), through the index below: add a module here and its names to the index
(tests/test_plugin_index.py checks that the index names every registered function and its
module)."""

MODULES = ["cuda2hip.checks.api.forms",
           "cuda2hip.checks.barriers",
           "cuda2hip.checks.build.cmake_fixes",
           "cuda2hip.checks.api.constexpr_math",
           "cuda2hip.checks.api.device_functions",
           "cuda2hip.checks.hazards",
           "cuda2hip.checks.launch",
           "cuda2hip.checks.streams.memcpy_async",
           "cuda2hip.checks.streams.streams",
           "cuda2hip.checks.api.struct_fields",
           "cuda2hip.checks.api.type_forms",
           "cuda2hip.checks.warp.intrinsics",
           "cuda2hip.checks.warp.warp_size"]

# predicate name -> module that registers it
PREDICATES = {
    "argument-count-differs": "cuda2hip.checks.api.forms",
    "ballot-truncated": "cuda2hip.checks.warp.intrinsics",
    "bare-s-barrier": "cuda2hip.checks.barriers",
    "barrier-in-thread-dependent-flow": "cuda2hip.checks.barriers",
    "blocking-copy-call": "cuda2hip.checks.streams.memcpy_async",
    "constexpr-math-call": "cuda2hip.checks.api.constexpr_math",
    "coordinate-min-max": "cuda2hip.checks.api.type_forms",
    "cuda-arch-condition": "cuda2hip.checks.hazards",
    "device-function-missing": "cuda2hip.checks.api.device_functions",
    "grid-constant": "cuda2hip.checks.api.type_forms",
    "grid-sync-without-cooperative-launch": "cuda2hip.checks.barriers",
    "handle-integer-arithmetic": "cuda2hip.checks.api.type_forms",
    "hard-coded-warp-size": "cuda2hip.checks.warp.warp_size",
    "inline-ptx": "cuda2hip.checks.hazards",
    "kernel-argument-cast": "cuda2hip.checks.api.forms",
    "launch-bounds-min-blocks": "cuda2hip.checks.hazards",
    "legacy-stream-unavailable": "cuda2hip.checks.streams.streams",
    "legacy-warp-intrinsic": "cuda2hip.checks.warp.intrinsics",
    "memory-type-integer": "cuda2hip.checks.hazards",
    "null-stream-work-with-nonblocking-streams": "cuda2hip.checks.streams.streams",
    "out-pointer-cast": "cuda2hip.checks.api.forms",
    "overloaded-function-address": "cuda2hip.checks.api.forms",
    "stream-flag-as-handle": "cuda2hip.checks.streams.streams",
    "struct-field-missing": "cuda2hip.checks.api.struct_fields",
    "texture-reference": "cuda2hip.checks.hazards",
    "warp-sync-mask-32-bit": "cuda2hip.checks.warp.intrinsics",
    "warp-sync-unavailable": "cuda2hip.checks.warp.intrinsics",
}

# fix builder name -> module that registers it
BUILDERS = {
    "api-form-level": "cuda2hip.checks.api.forms",
    "argument-count-defaults": "cuda2hip.checks.api.forms",
    "ballot-to-64-bit": "cuda2hip.checks.warp.intrinsics",
    "bare-s-barrier-to-syncthreads": "cuda2hip.checks.barriers",
    "blocking-copy-to-async": "cuda2hip.checks.streams.memcpy_async",
    "cmake-architectures": "cuda2hip.checks.build.cmake_fixes",
    "cmake-cu-language": "cuda2hip.checks.build.cmake_fixes",
    "cmake-find-hip": "cuda2hip.checks.build.cmake_fixes",
    "cmake-legacy-target": "cuda2hip.checks.build.cmake_fixes",
    "coordinate-to-unsigned": "cuda2hip.checks.api.type_forms",
    "cuda-arch-to-hip-device-compile": "cuda2hip.checks.hazards",
    "hip_symbol_wrap": "cuda2hip.checks.launch",
    "kernel-argument-cast": "cuda2hip.checks.api.forms",
    "kernel_launch_to_ggl": "cuda2hip.checks.launch",
    "launch-bounds-waves": "cuda2hip.checks.hazards",
    "legacy-stream-to-null": "cuda2hip.checks.streams.streams",
    "memory-type-enumerator": "cuda2hip.checks.hazards",
    "out-pointer-cast": "cuda2hip.checks.api.forms",
    "warp-sync-mask-64-bit": "cuda2hip.checks.warp.intrinsics",
    "warp-sync-to-legacy": "cuda2hip.checks.warp.intrinsics",
}


def load(index: dict[str, str], name: str) -> None:
    """Import the module that registers `name` (every module when the index does not know it,
    so that an unknown name is reported with the list of known ones)."""
    import importlib

    modules = [index[name]] if name in index else MODULES
    for module in modules:
        importlib.import_module(module)
