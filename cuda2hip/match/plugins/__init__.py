"""Python predicates and fix builders used by YAML rules, one topic per module. A run imports
only the modules whose names its compiled rules use (importing them all costs a pre-commit call
several ms), through the index below: add a module here and its names to the index
(tests/test_plugin_index.py checks that the index names every registered function and its
module)."""

MODULES = ["api_forms", "barriers", "cmake_build", "constexpr_math", "deprecated_api", "device_functions", "hazards", "host_math", "launch", "memcpy_async", "std_headers_dropped", "streams",
           "struct_fields", "type_forms", "warp", "warp_size", "wavefront_macro"]

# predicate name -> module that registers it
PREDICATES = {
    "argument-count-differs": "api_forms",
    "ballot-truncated": "warp",
    "bare-s-barrier": "barriers",
    "barrier-in-thread-dependent-flow": "barriers",
    "blocking-copy-call": "memcpy_async",
    "constexpr-math-call": "constexpr_math",
    "coordinate-min-max": "type_forms",
    "cuda-arch-condition": "hazards",
    "device-function-missing": "device_functions",
    "grid-constant": "type_forms",
    "grid-sync-without-cooperative-launch": "barriers",
    "handle-integer-arithmetic": "type_forms",
    "hard-coded-warp-size": "warp_size",
    "hip-api-deprecated": "deprecated_api",
    "host-math-classification": "host_math",
    "inline-ptx": "hazards",
    "kernel-argument-cast": "api_forms",
    "launch-bounds-min-blocks": "hazards",
    "legacy-stream-unavailable": "streams",
    "legacy-warp-intrinsic": "warp",
    "memory-type-integer": "hazards",
    "null-stream-work-with-nonblocking-streams": "streams",
    "out-pointer-cast": "api_forms",
    "overloaded-function-address": "api_forms",
    "stream-flag-as-handle": "streams",
    "string-header-dropped": "std_headers_dropped",
    "struct-field-missing": "struct_fields",
    "texture-reference": "hazards",
    "warp-sync-mask-32-bit": "warp",
    "warp-sync-unavailable": "warp",
    "wavefront-size-macro": "wavefront_macro",
}

# fix builder name -> module that registers it
BUILDERS = {
    "api-form-level": "api_forms",
    "argument-count-defaults": "api_forms",
    "ballot-to-64-bit": "warp",
    "bare-s-barrier-to-syncthreads": "barriers",
    "blocking-copy-to-async": "memcpy_async",
    "cmake-architectures": "cmake_build",
    "cmake-cu-language": "cmake_build",
    "cmake-find-hip": "cmake_build",
    "cmake-legacy-target": "cmake_build",
    "constexpr-to-inline": "constexpr_math",
    "coordinate-to-unsigned": "type_forms",
    "cuda-arch-to-hip-device-compile": "hazards",
    "device-function-polyfill": "device_functions",
    "hip_symbol_wrap": "launch",
    "host-math-std": "host_math",
    "kernel-argument-cast": "api_forms",
    "include-string-header": "std_headers_dropped",
    "kernel_launch_to_ggl": "launch",
    "launch-bounds-waves": "hazards",
    "legacy-stream-to-null": "streams",
    "memory-type-enumerator": "hazards",
    "out-pointer-cast": "api_forms",
    "warp-sync-mask-64-bit": "warp",
    "warp-sync-to-legacy": "warp",
    "wavefront-size-level": "wavefront_macro",
}


def load(index: dict[str, str], name: str) -> None:
    """Import the module that registers `name` (every module when the index does not know it,
    so that an unknown name is reported with the list of known ones)."""
    import importlib

    modules = [index[name]] if name in index else MODULES
    for module in modules:
        importlib.import_module(f"{__name__}.{module}")
