"""What a tree of ROCm headers declares, from clang's own parse (libclang, the LLVM 15 of
Debian 12's hipcc, through the `clang` Python bindings).

The public headers of a package (usr/include/X and usr/include/DIR/X) are parsed as HIP for the AMD
platform (`-x hip --offload-arch=gfx90a`, after `hip/hip_runtime.h`), once for the host and once for
the device side, so that the preprocessor has dropped comments, `#if 0` blocks and the branches not
taken for AMD, and macro-generated declarations are expanded. A name counts as declared when clang
sees a declaration of it in one of the package's own files: a function, a type (struct, class,
union, enum, typedef, alias, template), an enumerator, a namespace, a variable or a macro. Class
members are kept apart ("member"): a member function is not a free function of that name.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from header_forms.clang_decls import LIBCLANG, cindex  # noqa: F401  (the libclang both tools use)

RESOURCE_DIR = "/usr/lib/llvm-15/lib/clang/15.0.6"
PUBLIC_SUFFIXES = (".h", ".hpp", ".cuh", ".hh")
# Headers under these directory names are implementation details (or the NVIDIA platform's).
PRIVATE_DIRS = re.compile(r"(?:^|/)(?:detail|details|internal|nvidia_detail|nvcc_detail|hcc_detail)(?:/|$)")
FLAGS = ["-x", "hip", "--offload-arch=gfx90a", "-nogpuinc", "-nogpulib", "-std=c++17",
         "-include", "__clang_hip_runtime_wrapper.h", "-resource-dir", RESOURCE_DIR]
SIDES = ((), ("--cuda-device-only",))


@lru_cache(maxsize=None)
def _kinds() -> tuple[dict, frozenset]:
    K = cindex().CursorKind
    kinds = {
        K.FUNCTION_DECL: "function", K.FUNCTION_TEMPLATE: "function",
        K.STRUCT_DECL: "type", K.CLASS_DECL: "type", K.UNION_DECL: "type", K.ENUM_DECL: "type",
        K.TYPEDEF_DECL: "type", K.TYPE_ALIAS_DECL: "type", K.CLASS_TEMPLATE: "type",
        K.TYPE_ALIAS_TEMPLATE_DECL: "type", K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION: "type",
        K.ENUM_CONSTANT_DECL: "enumerator", K.NAMESPACE: "namespace", K.NAMESPACE_ALIAS: "namespace",
        K.VAR_DECL: "variable", K.MACRO_DEFINITION: "macro",
        K.FIELD_DECL: "member", K.CXX_METHOD: "member", K.CONSTRUCTOR: "member", K.DESTRUCTOR: "member",
        K.CONVERSION_FUNCTION: "member",
    }
    scopes = frozenset({K.NAMESPACE, K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.ENUM_DECL, K.LINKAGE_SPEC,
                        K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.UNEXPOSED_DECL})
    return kinds, scopes


@dataclass
class Declarations:
    """name -> {kind: first file (relative to usr/include) that declares it so}."""

    names: dict[str, dict[str, str]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # headers clang stopped on (fatal errors)

    def add(self, name: str, kind: str, path: str) -> None:
        self.names.setdefault(name, {}).setdefault(kind, path)

    def update(self, other: "Declarations") -> None:
        for name, kinds in other.names.items():
            for kind, path in kinds.items():
                self.add(name, kind, path)
        self.failed += [f for f in other.failed if f not in self.failed]


def public_headers(files: list[str]) -> list[str]:
    """The package's headers at depth 1 or 2 below usr/include, relative to it."""
    out = []
    for f in files:
        if not f.startswith("usr/include/") or not f.endswith(PUBLIC_SUFFIXES):
            continue
        rel = f[len("usr/include/"):]
        if rel.count("/") <= 1 and not PRIVATE_DIRS.search(rel):
            out.append(rel)
    return sorted(out)


def parse(include: Path, headers: list[str], keep, defines: tuple[str, ...] = ()) -> Declarations:
    """The declarations clang sees in a translation unit that includes hip_runtime.h and
    `headers`, host and device side, in the files for which `keep(absolute path)` gives the name
    to cite (None: not wanted)."""
    ci = cindex()
    kinds, scopes = _kinds()
    source = "".join(f"#include <{h}>\n" for h in ["hip/hip_runtime.h", *headers])
    out = Declarations()
    options = (ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_INCOMPLETE
               | ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    for side in SIDES:
        args = [*FLAGS, *side, *(f"-D{d}" for d in defines), "-isystem", str(include)]
        tu = ci.Index.create().parse("audit.hip", args=args, unsaved_files=[("audit.hip", source)], options=options)
        fatal = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Fatal]
        if fatal:
            out.failed.append(f"{', '.join(headers)}: {fatal[0].spelling}")
            continue
        files: dict[str, str | None] = {}
        stack = [tu.cursor]
        while stack:
            for cursor in stack.pop().get_children():
                f = cursor.location.file
                if f is None:
                    continue
                rel = files.get(f.name, "")
                if rel == "":  # (headers that include "../config.hpp" are named with the ..)
                    rel = files[f.name] = keep(os.path.normpath(f.name))
                if rel is None:
                    continue
                kind = kinds.get(cursor.kind)
                if kind and cursor.spelling:
                    out.add(cursor.spelling, kind, rel)
                if cursor.kind in scopes:
                    stack.append(cursor)
    return out


def package_declarations(include: Path, files: list[str], defines: tuple[str, ...] = ()) -> Declarations:
    """Everything the public headers of one package (its `files`) declare, in the tree `include`.
    All headers in one translation unit first; if clang stops on one, each on its own."""
    headers = public_headers(files)
    own = frozenset(f[len("usr/include/"):] for f in files if f.startswith("usr/include/"))
    prefix = str(include).rstrip("/") + "/"

    def keep(path: str) -> str | None:
        rel = path[len(prefix):] if path.startswith(prefix) else None
        return rel if rel in own else None

    if not headers:
        return Declarations()
    together = parse(include, headers, keep, defines)
    if not together.failed:
        return together
    out = Declarations()
    for header in headers:
        out.update(parse(include, [header], keep, defines))
    return out


def compiler_declarations(include: Path, builtins: tuple[str, ...] = ()) -> Declarations:
    """What HIP code has without any ROCm package: clang's HIP wrapper headers (the device math
    functions of `__clang_hip_math.h`, ...), the C/C++ library they include (`cos`, `sqrt`, ...),
    the compiler's predefined macros (`__HIPCC__`, ...) and those of the `__builtin_*` names in
    `builtins` that clang has (`__has_builtin`, asked on the device side: `__builtin_trap`)."""
    resource = os.path.realpath(RESOURCE_DIR) + "/"
    rocm = os.path.realpath(include) + "/"
    clang = f"clang {os.path.basename(RESOURCE_DIR)}"

    def keep(path: str) -> str | None:
        real = os.path.realpath(path)
        if real.startswith(rocm):
            return None
        return f"{clang} {real[len(resource):]}" if real.startswith(resource) else real

    out = parse(include, [], keep)
    for side in SIDES:
        proc = subprocess.run(["clang-15", *FLAGS[:-4], *side, "-E", "-dM", "-"], input="", capture_output=True,
                              text=True)
        for line in proc.stdout.splitlines():
            m = re.match(r"#define (\w+)", line)
            if m:
                out.add(m.group(1), "macro", f"{clang} predefined")
    if builtins:
        probe = "".join(f"#if __has_builtin({b})\nBUILTIN {b}\n#endif\n" for b in builtins)
        proc = subprocess.run(["clang-15", *FLAGS[:-4], *SIDES[1], "-E", "-P", "-"], input=probe,
                              capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("BUILTIN "):
                out.add(line.split()[1], "function", f"{clang} builtin")
    return out
