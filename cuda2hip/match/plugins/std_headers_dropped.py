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

from ...findings import Edit
from ..api_tables import version_tuple
from ..builders import BuiltFix, fix_builder
from ..include_layout import scan
from ..predicates import predicate
from .cuda_ast import capture, enclosing_function, is_device_function, text

# <string.h> (C17 7.24) and the POSIX / GNU functions glibc's <string.h> declares (with
# <strings.h>, which it includes in C++: g++ and clang++ define _GNU_SOURCE)
STRING_H = frozenset("""memchr memcmp memcpy memmove memset strcat strchr strcmp strcoll strcpy strcspn strerror
strlen strncat strncmp strncpy strpbrk strrchr strspn strstr strtok strxfrm strdup strndup strnlen strtok_r
strerror_r strsignal stpcpy stpncpy memccpy mempcpy memrchr strsep strcasestr strchrnul strcasecmp strncasecmp
bzero bcopy bcmp""".split())
# headers that declare them (the C++ and the C spelling; strings.h for the BSD ones)
PROVIDERS = frozenset({"cstring", "string.h", "strings.h"})
DROPPED_FROM = version_tuple("7.0")  # ROCm 6.4's hip_runtime_api.h still includes <string.h>
RUNTIME = frozenset({"hip/hip_runtime.h", "hip/hip_runtime_api.h", "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"})
_CPLUSPLUS = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*__cplusplus", re.MULTILINE)


def _applies(ctx) -> bool:
    t = ctx.settings.target_rocm
    return t is None or version_tuple(t) >= DROPPED_FROM


def _provided(ctx) -> bool:
    """The file includes a header that declares the string functions, itself or through the
    project headers it includes."""
    cache = ctx.file_cache
    if "std-headers:provided" not in cache:
        from ...include_graph import local_header

        root = ctx.settings.root
        seen: set[str] = set()

        def has(path: str, data: bytes, depth: int) -> bool:
            for inc in scan(data).includes:
                if inc.header in PROVIDERS:
                    return True
                if inc.quoted and depth < 8:
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
    from ..runtime_include import top_of_file
    from ..std_headers import is_standard_header

    includes = [i for i in scan(ctx.data).includes if i.depth == 0 and i.extern_c is None and i.end <= before]
    for group in (RUNTIME, None):
        for inc in includes:
            if (inc.header in group) if group is not None else is_standard_header(inc.header):
                return inc.end
    if includes:
        return includes[-1].end
    return min(top_of_file(ctx), before)


@fix_builder("include-string-header")
def include_string_header(match, ctx, rule):
    header = _header(ctx)
    pos = insertion_point(ctx, match.node.start_byte)
    text_ = f"#include <{header}>\n"
    if pos > 0 and ctx.data[pos - 1:pos] != b"\n":
        text_ = "\n" + text_
    return BuiltFix([Edit(pos, pos, text_)], description=f"Include <{header}>")
