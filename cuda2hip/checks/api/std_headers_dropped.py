"""HIP124: C library functions whose header the migrated file no longer gets. nvcc includes
cuda_runtime.h ahead of every .cu file, and it declares the C string functions; so did HIP's
runtime headers up to ROCm 6.4 (`hip_runtime_api.h`: `#include <string.h>  // for
getDeviceProp`). HIP 7.x's do not, and hip-clang declares `__device__` `memset` / `memcpy` in the
global namespace, so host code calling them without the header fails ("no matching function for
call to 'memset'", or "use of undeclared identifier 'strlen'"). The fix includes the header once,
with the file's other includes."""

from __future__ import annotations

import re
from pathlib import Path

from ...api.std_headers import is_standard_header
from ...api.tables import version_tuple
from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.preprocessor.layout import scan
from ...lang.cxx.syntax import enclosing_function, is_device_function, text

# <string.h> (C17 7.24) and the POSIX / GNU functions glibc's <string.h> declares (with
# <strings.h>, which it includes in C++: g++ and clang++ define _GNU_SOURCE)
STRING_H = frozenset("""memchr memcmp memcpy memmove memset strcat strchr strcmp strcoll strcpy strcspn strerror
strlen strncat strncmp strncpy strpbrk strrchr strspn strstr strtok strxfrm strdup strndup strnlen strtok_r
strerror_r strsignal stpcpy stpncpy memccpy mempcpy memrchr strsep strcasestr strchrnul strcasecmp strncasecmp
bzero bcopy bcmp""".split())
# headers that declare them (the C++ and the C spelling; strings.h for the BSD ones), and library
# headers whose HIP counterparts include them at ROCm 7.2 (checked by compiling `memset` after each;
# the CUDA spelling is rewritten to the HIP one in the same run)
PROVIDERS = frozenset({
    "cstring", "string.h", "strings.h",
    "thrust/device_vector.h", "thrust/host_vector.h", "thrust/sort.h", "thrust/reduce.h",
    "cub/cub.cuh", "hipcub/hipcub.hpp", "curand_kernel.h", "hiprand/hiprand_kernel.h", "hiprand_kernel.h",
})
PROVIDER_PREFIXES = ("cub/device/", "hipcub/device/")
DROPPED_FROM = version_tuple("7.0")  # ROCm 6.4's hip_runtime_api.h still includes <string.h>
RUNTIME = frozenset({"hip/hip_runtime.h", "hip/hip_runtime_api.h", "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"})
_CPLUSPLUS = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*__cplusplus", re.MULTILINE)


HIP_SUFFIXES = frozenset({".cu", ".cuh", ".hu", ".hip"})
_DEVICE_SYNTAX = re.compile(rb"\b__(?:global|device|host)__\b|<<<")
_RUNTIME_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"](?:cuda_runtime(?:_api)?\.h|cuda\.h|hip/hip_runtime(?:_api)?\.h)[>"]',
                              re.MULTILINE)


def compiled_with_hip(ctx, *, runtime_include: bool) -> bool:
    """The file is CUDA that hip-clang compiles after migration: a .cu / .cuh file, or code with
    kernel syntax or execution spaces (and, with `runtime_include`, host code that includes the
    runtime header, which a host compiler then compiles with HIP's headers). Plain C++ of the
    project (a CPU backend next to the CUDA one) is left alone."""
    key = f"std-headers:hip:{runtime_include}"
    cache = ctx.file_cache
    if key not in cache:
        data = ctx.file_context.data
        if ctx.settings.language_for(Path(ctx.path)) != "cuda":
            cache[key] = False  # CUDA in a Python string: hipRTC compiles it, device code only
        else:
            cache[key] = (Path(ctx.path).suffix.lower() in HIP_SUFFIXES or _DEVICE_SYNTAX.search(data) is not None
                          or (runtime_include and _RUNTIME_INCLUDE.search(data) is not None))
    return cache[key]


def _applies(ctx) -> bool:
    t = ctx.settings.target_rocm
    return (t is None or version_tuple(t) >= DROPPED_FROM) and compiled_with_hip(ctx, runtime_include=True)


def _provided(ctx) -> bool:
    """The file includes a header that declares the string functions, itself or through the
    project headers it includes."""
    cache = ctx.file_cache
    if "std-headers:provided" not in cache:
        from ...lang.cxx.includes import local_header

        root = ctx.settings.root
        seen: set[str] = set()

        def has(path: str, data: bytes, depth: int) -> bool:
            for inc in scan(data).includes:
                if inc.header in PROVIDERS or inc.header.startswith(PROVIDER_PREFIXES):
                    return True
                if depth < 8 and (inc.quoted or not is_standard_header(inc.header)):
                    got = local_header(path, inc.header, root)
                    if got is not None and got[0] not in seen:
                        seen.add(got[0])
                        if has(got[0], got[1], depth + 1):
                            return True
            return False

        cache["std-headers:provided"] = has(ctx.path, ctx.file_context.data, 0)
    return cache["std-headers:provided"]


@predicate("string-header-dropped", callees=STRING_H)
def string_header_dropped(node, env, ctx, args):
    """The first host-side call of a `<string.h>` function in a file that does not include it,
    when the targeted ROCm's runtime header does not bring it in. Adds $NAME, $HEADER."""
    fn_node = node.child_by_field_name("function")
    if fn_node is None:
        return False
    spelled = text(fn_node, ctx.data)
    name = spelled.removeprefix("::")
    if name not in STRING_H or fn_node.type not in ("identifier", "qualified_identifier") or ctx.is_fragment:
        return False
    if not _applies(ctx) or ctx.file_cache.get("std-headers:reported"):
        return False
    fn = enclosing_function(node)
    while fn is not None and fn.type != "function_definition":
        fn = enclosing_function(fn)
    if fn is not None and is_device_function(fn, ctx.data):
        return False  # HIP declares device memset / memcpy
    if _provided(ctx):
        return False
    ctx.file_cache["std-headers:reported"] = True
    return {"NAME": capture(fn_node, ctx.data, name), "HEADER": capture(fn_node, ctx.data, _header(ctx))}


def _header(ctx) -> str:
    # a header that C code may include too (it tests __cplusplus) gets the C spelling
    return "string.h" if _CPLUSPLUS.search(ctx.file_context.data) else "cstring"


def insertion_point(ctx, before: int) -> int:
    """After the file's first unconditional include of the runtime or of a standard header
    (with the other includes, outside `#if` and `extern "C"`), else where the runtime include
    goes; never after `before`."""
    from .placement import top_of_file
    from ...api.std_headers import is_standard_header

    includes = [i for i in scan(ctx.data).includes if i.depth == 0 and i.extern_c is None and i.end <= before]
    for group in (RUNTIME, None):
        for inc in includes:
            if (inc.header in group) if group is not None else is_standard_header(inc.header):
                return inc.end
    if includes:
        return includes[-1].end
    return min(top_of_file(ctx), before)


def _unknown_include(ctx) -> str | None:
    """The first header the file includes that is neither standard, a CUDA/HIP header known not
    to declare the string functions, nor a project file this run can read: it may bring
    `<string.h>` in (a project header found through -I, a third-party library)."""
    from ...lang.cxx.includes import local_header

    for inc in scan(ctx.data).includes:
        name = inc.header
        if is_standard_header(name) or name in RUNTIME or name.startswith(("cuda", "cu", "hip", "hip/", "nv")):
            continue
        if local_header(ctx.path, name, ctx.settings.root) is None:
            return name
    return None


@fix_builder("include-string-header")
def include_string_header(match, ctx, rule):
    header = _header(ctx)
    pos = insertion_point(ctx, match.node.start_byte)
    text_ = f"#include <{header}>\n"
    if pos > 0 and ctx.data[pos - 1:pos] != b"\n":
        text_ = "\n" + text_
    edits = [Edit(pos, pos, text_)]
    unknown = _unknown_include(ctx)
    if unknown is None:
        return BuiltFix(edits, description=f"Include <{header}>")
    name = text(match.node.child_by_field_name("function"), ctx.data).removeprefix("::")
    message = (f"`{name}` needs `<{header}>`, which this file does not include, unless `{unknown}` (not "
               "found in the run) brings it in: nvcc's cuda_runtime.h and the HIP runtime headers up to ROCm "
               "6.4 included `<string.h>`, ROCm 7's do not")
    return BuiltFix(edits, description=f"Include <{header}>", message=message, severity="warning")
