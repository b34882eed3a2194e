"""Default-stream semantics: where work goes to the null stream, which streams are
non-blocking, stream flags used as handles, and the per-thread default-stream build setting.

`DEFAULT_STREAM_FLAGS` / `hip_default_stream_flag` are the mapping of nvcc's default-stream
settings to hip-clang's, for the build-file migrations (CMake, Makefiles, setup.py) to reuse.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from ...api.tables import version_tuple
from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.syntax import (call_args, callee_name, enclosing_function, is_device_function, launch_config, line_of,
                                named, text, walk)

# nvcc setting -> hip-clang flag. nvcc: `--default-stream {legacy|null|per-thread}` ('null' is
# a deprecated alias for 'legacy', `nvcc --help`); defining CUDA_API_PER_THREAD_DEFAULT_STREAM
# selects the per-thread stream. hip-clang: `-fgpu-default-stream={legacy|per-thread}`
# (clang HIPSupport.rst); legacy is the default of both compilers.
DEFAULT_STREAM_FLAGS: dict[str, str] = {
    "legacy": "-fgpu-default-stream=legacy",
    "null": "-fgpu-default-stream=legacy",
    "per-thread": "-fgpu-default-stream=per-thread",
}
PER_THREAD_MACROS = ("CUDA_API_PER_THREAD_DEFAULT_STREAM", "HIP_API_PER_THREAD_DEFAULT_STREAM",
                     "__HIP_API_PER_THREAD_DEFAULT_STREAM__")
_NVCC_STREAM = re.compile(r"^-{1,2}default-stream(?:=(.*))?$")


def hip_default_stream_flag(args: list[str]) -> str | None:
    """The hip-clang flag for an nvcc command line's default-stream setting, or None.

    Understands `--default-stream X`, `--default-stream=X`, `-default-stream X` and
    `-DCUDA_API_PER_THREAD_DEFAULT_STREAM[=1]` (the last setting wins)."""
    flag = None
    i = 0
    while i < len(args):
        a = args[i]
        m = _NVCC_STREAM.match(a)
        if m:
            value = m.group(1)
            if value is None and i + 1 < len(args):
                i += 1
                value = args[i]
            flag = DEFAULT_STREAM_FLAGS.get((value or "").strip(), flag)
        elif re.fullmatch(r"-DCUDA_API_PER_THREAD_DEFAULT_STREAM(=1)?", a):
            flag = DEFAULT_STREAM_FLAGS["per-thread"]
        i += 1
    return flag


# ---------------------------------------------------------------- which stream a call uses

# async API (without prefix) -> index of its stream parameter (omitted = the null stream)
STREAM_PARAM: dict[str, int] = {
    "MemcpyAsync": 4, "MemsetAsync": 3, "Memcpy2DAsync": 7, "Memset2DAsync": 5, "Memcpy3DAsync": 1,
    "Memset3DAsync": 3, "MemcpyToSymbolAsync": 5, "MemcpyFromSymbolAsync": 5, "MemcpyPeerAsync": 5,
    "MemPrefetchAsync": 3, "LaunchKernel": 5, "LaunchCooperativeKernel": 5,
}
# APIs whose stream argument is required (a flag there is never the null stream by default)
STREAM_ARG_REQUIRED: dict[str, int] = {
    "StreamSynchronize": 0, "StreamQuery": 0, "StreamDestroy": 0, "StreamWaitEvent": 0,
    "StreamAddCallback": 0, "StreamGetFlags": 0, "StreamGetPriority": 0, "EventRecord": 1,
    "StreamBeginCapture": 0, "StreamEndCapture": 0, "GraphLaunch": 1,
}
NULL_STREAMS = frozenset({"0", "NULL", "nullptr", "cudaStreamLegacy", "hipStreamLegacy", "(cudaStream_t)0",
                          "(hipStream_t)0", "0x0"})


def _api(name: str) -> str | None:
    for prefix in ("cuda", "hip"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


def stream_argument(call: ts.Node, data: bytes) -> tuple[str, ts.Node | None] | None:
    """('launch' | 'api', the stream argument node or None when omitted) for a kernel launch or
    a stream-taking runtime call; None for other calls."""
    config = launch_config(call)
    if config is not None:
        return "launch", (config[3] if len(config) > 3 else None)
    name = callee_name(call, data)
    args = call_args(call)
    if name == "hipLaunchKernelGGL":
        return "launch", (args[4] if len(args) > 4 else None)
    base = _api(name)
    if base in STREAM_PARAM:
        idx = STREAM_PARAM[base]
        return "api", (args[idx] if len(args) > idx else None)
    return None


def is_null_stream(node: ts.Node | None, data: bytes) -> bool:
    if node is None:
        return True
    return re.sub(r"\s+", "", text(node, data)) in NULL_STREAMS


def nonblocking_streams(ctx) -> list[tuple[str, int]]:
    """(stream expression, line) of every stream the host code of the translation unit creates
    with cudaStreamNonBlocking / hipStreamNonBlocking (cached per file). Streams a kernel creates
    (dynamic parallelism, where device streams must be non-blocking) are the device runtime's:
    host work cannot race with them."""
    cache = ctx.file_cache
    if "nonblocking-streams" not in cache:
        root_ctx = ctx.file_context
        data = root_ctx.data
        found = []
        if b"StreamNonBlocking" in data:
            for node in walk(root_ctx.tree.root_node):
                if node.type != "call_expression":
                    continue
                base = _api(callee_name(node, data))
                if base not in ("StreamCreateWithFlags", "StreamCreateWithPriority"):
                    continue
                args = call_args(node)
                if len(args) >= 2 and "StreamNonBlocking" in text(args[1], data) \
                        and not is_device_function(enclosing_function(node), data):
                    handle = text(args[0], data)
                    found.append((handle[1:].strip() if handle.startswith("&") else handle, line_of(root_ctx, node)))
        cache["nonblocking-streams"] = found
    return cache["nonblocking-streams"]


@predicate("null-stream-work-with-nonblocking-streams", requires=("StreamNonBlocking",))
def null_stream_work(node, env, ctx, args):
    """A kernel launch or async call on the null stream (stream omitted, 0, NULL, nullptr or the
    legacy handle) in a translation unit that creates cudaStreamNonBlocking streams. Adds
    $WORK, $STREAM (the first such stream) and $LINE (where it is created)."""
    got = stream_argument(node, ctx.data)
    if got is None:
        return False
    kind, stream = got
    if not is_null_stream(stream, ctx.data) or is_device_function(enclosing_function(node), ctx.data):
        return False
    streams = nonblocking_streams(ctx)
    if not streams:
        return False
    if kind == "launch":
        work = "this kernel launch without a stream" if stream is None else f"this kernel launch on stream `{text(stream, ctx.data)}`"
    else:
        name = callee_name(node, ctx.data)
        work = f"`{name}` without a stream" if stream is None else f"`{name}` on stream `{text(stream, ctx.data)}`"
    names = ", ".join(f"`{s}`" for s, _ in streams[:3]) + (" ..." if len(streams) > 3 else "")
    return {"WORK": capture(node, ctx.data, work), "STREAMS": capture(node, ctx.data, names),
            "LINE": capture(node, ctx.data, str(streams[0][1]))}


# ---------------------------------------------------------------- stream flags used as handles

STREAM_TYPES = frozenset({"cudaStream_t", "hipStream_t"})


@predicate("stream-flag-as-handle")
def stream_flag_as_handle(node, env, ctx, args):
    """Adds $NAME when the flag stands where a stream handle goes (see `_flag_as_handle`)."""
    return {"NAME": capture(node, ctx.data)} if _flag_as_handle(node, ctx) else False


def _flag_as_handle(node: ts.Node, ctx) -> bool:
    """`cudaStreamDefault` / `hipStreamDefault` (a flag value) where a stream handle goes: the
    stream argument of a launch or a stream API, or the initial value of a stream variable."""
    data = ctx.data
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "kernel_call_syntax":
        config = named(parent)
        return len(config) > 3 and config[3] == node
    if parent.type == "argument_list":
        call = parent.parent
        if call is None or call.type != "call_expression":
            return False
        got = stream_argument(call, data)
        if got is not None:
            return got[1] == node
        base = _api(callee_name(call, data))
        idx = STREAM_ARG_REQUIRED.get(base) if base else None
        arguments = named(parent)
        return idx is not None and len(arguments) > idx and arguments[idx] == node
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
        decl = parent.parent
        typ = decl.child_by_field_name("type") if decl is not None else None
        return typ is not None and text(typ, data) in STREAM_TYPES
    return False


# ---------------------------------------------------------------- cudaStreamLegacy on old ROCm

LEGACY_STREAM_ROCM = version_tuple("6.2")  # hipStreamLegacy appeared in ROCm 6.2 (HIPIFY runtime table)


@predicate("legacy-stream-unavailable")
def legacy_stream_unavailable(node, env, ctx, args):
    """`cudaStreamLegacy` / `hipStreamLegacy` when the target is older than 6.2. Adds $NAME,
    $TARGET and $NOTE (whether the null stream is the legacy stream in this file)."""
    target = ctx.settings.target_rocm
    if version_tuple(target) >= LEGACY_STREAM_ROCM:
        return False
    if defines_per_thread(ctx):
        note = ("this file selects the per-thread default stream, so `0` is not the legacy stream here: "
                "create a blocking stream or synchronize explicitly")
    else:
        note = ("unless the file is compiled with `-fgpu-default-stream=per-thread`, the null stream `0` "
                "is the legacy default stream")
    return {"NAME": capture(node, ctx.data), "TARGET": capture(node, ctx.data, target),
            "NOTE": capture(node, ctx.data, note)}


def defines_per_thread(ctx) -> bool:
    data = ctx.file_context.data
    return any(re.search(rb"#\s*define\s+" + m.encode() + rb"\b", data) for m in PER_THREAD_MACROS)


@fix_builder("legacy-stream-to-null")
def legacy_stream_to_null(match, ctx, rule):
    if defines_per_thread(ctx):
        return None
    return BuiltFix([Edit(match.start, match.end, "0")], description="Use the null stream `0`")
