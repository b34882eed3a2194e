"""Function declarations and macros of C/C++ headers, as clang reads them.

clang's JSON AST dump (`-Xclang -ast-dump=json`, narrowed by `-ast-dump-filter PREFIX`) gives
every parameter type as written (`qualType`) and with typedefs resolved (`desugaredQualType`);
`-E -dM` gives the macros (`#define cublasCreate cublasCreate_v2`, version numbers). Used by
tools/generate_signature_data.py; nothing here runs when cuda2hip runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # as written in the header
    canonical: str  # typedefs resolved


@dataclass(frozen=True)
class Decl:
    name: str
    result: str
    params: tuple[Param, ...]


class Headers:
    """One translation unit including `headers`, compiled by `command` (a compiler invocation
    up to the input file: language, includes, defines)."""

    def __init__(self, command: list[str], headers: list[str], env: dict | None = None):
        self.command = command
        self.source = "".join(f"#include <{h}>\n" for h in headers)
        self.env = dict(os.environ, **(env or {}))
        self._macros: dict[str, str] | None = None

    def _compile(self, source: str, *extra: str) -> subprocess.CompletedProcess:
        # a file, not stdin: hipcc finds the HIP runtime only for a named input
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "headers.cpp"
            src.write_text(source)
            return subprocess.run([*self.command, *extra, str(src)], capture_output=True, text=True, env=self.env)

    def _run(self, *extra: str) -> str:
        proc = self._compile(self.source, *extra)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(self.command)} failed on {self.source!r}:\n{proc.stderr[-2000:]}")
        return proc.stdout

    def same_types(self, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """The pairs of type spellings that name one type in this translation unit (the compiler
        decides: `hipStream_t` is `miopenAcceleratorQueue_t`); a spelling it does not know is no
        match."""
        head = self.source + "#include <type_traits>\n"
        first = head.count("\n") + 1
        probes = "".join(f"static_assert(std::is_same<{a}, {b}>::value, \"\");\n" for a, b in pairs)
        proc = self._compile(head + probes, "-fsyntax-only", "-ferror-limit=0")
        failed = {int(m.group(1)) - first for m in re.finditer(r"headers\.cpp:(\d+):\d+: error", proc.stderr)}
        return {pair for i, pair in enumerate(pairs) if i not in failed}

    def canonical_types(self, spellings: list[str]) -> dict[str, str]:
        """Each spelling that names a type in this translation unit -> the type with every typedef
        resolved, as the compiler's mangling encodes it (`cudaStream_t` -> `CUstream_st *`): one
        probe function per spelling, compiled to assembly and demangled. Spellings that are no
        type here (enumerators, names of another version) are dropped, and the rest recompiled."""
        todo = list(dict.fromkeys(spellings))
        head = self.source
        first = head.count("\n") + 1
        while todo:
            probes = "".join(f"typedef {t} __c2h_t{i}; void __c2h_p{i}(__c2h_t{i} *) {{}}\n"
                             for i, t in enumerate(todo))
            with tempfile.TemporaryDirectory() as tmp:
                src, asm = Path(tmp) / "headers.cpp", Path(tmp) / "probes.s"
                src.write_text(head + probes)
                proc = subprocess.run([*self.command, "-S", "-ferror-limit=0", "-o", str(asm), str(src)],
                                      capture_output=True, text=True, env=self.env)
                text = asm.read_text() if proc.returncode == 0 else ""
            if proc.returncode != 0:
                failed = {int(m.group(1)) - first for m in re.finditer(r"headers\.cpp:(\d+):\d+: error", proc.stderr)}
                if not failed or not failed <= set(range(len(todo))):
                    raise RuntimeError(f"{' '.join(self.command)}: probes failed:\n{proc.stderr[-2000:]}")
                todo = [t for i, t in enumerate(todo) if i not in failed]
                continue
            symbols = re.findall(r"^(_Z\w*__c2h_p\d+\w*):", text, re.M)
            demangled = subprocess.run(["c++filt"], input="\n".join(symbols), capture_output=True, text=True,
                                       check=True).stdout.split("\n")
            out = {}
            for line in demangled:
                m = re.match(r"__c2h_p(\d+)\((.*)\)$", line.strip())
                if m:
                    out[todo[int(m.group(1))]] = _spelled(m.group(2)[:-1])  # the probe's own `*` dropped
            return out
        return {}

    def decls(self, prefix: str) -> tuple[dict[str, list[Decl]], dict[str, str]]:
        """Function declarations whose name contains `prefix`, by name (an overloaded name has
        several; a redeclaration with the same types is kept once), and the typedefs whose name
        contains it (name -> the type with typedefs resolved)."""
        text = self._run("-fsyntax-only", "-Xclang", "-ast-dump=json", "-Xclang", f"-ast-dump-filter={prefix}")
        found: dict[str, list[Decl]] = {}
        typedefs: dict[str, str] = {}
        decoder, i = json.JSONDecoder(), 0
        while True:
            while i < len(text) and text[i].isspace():
                i += 1
            if i >= len(text):
                return found, typedefs
            node, i = decoder.raw_decode(text, i)
            kind, name = node.get("kind"), node.get("name")
            if kind in ("TypedefDecl", "TypeAliasDecl") and name:
                t = node["type"]
                typedefs[name] = t.get("desugaredQualType", t["qualType"])
            if kind != "FunctionDecl" or not name:
                continue
            decl = _decl(node)
            same = found.setdefault(decl.name, [])
            if decl not in same:
                same.append(decl)

    def macros(self) -> dict[str, str]:
        """Object-like macros: name -> replacement text."""
        if self._macros is None:
            self._macros = {}
            for line in self._run("-E", "-dM").splitlines():
                m = re.match(r"#define (\w+) (.*)$", line)
                if m:
                    self._macros[m.group(1)] = m.group(2).strip()
        return self._macros

    def version(self, *names: str) -> str:
        """`MAJOR.MINOR.PATCH` from the version macros `names` ('?' where a macro is missing); one
        macro is a number `MAJOR * 100000 + MINOR * 100 + PATCH` (rocRAND, hipRAND)."""
        macros = self.macros()
        if len(names) == 1 and macros.get(names[0], "").isdigit():
            n = int(macros[names[0]])
            return f"{n // 100000}.{n // 100 % 1000}.{n % 100}"
        return ".".join(macros.get(n, "?").strip() or "0" for n in names)


def _spelled(t: str) -> str:
    """A demangled type in one spelling: tokens apart, `*` and `&` as tokens (`void **` -> `void * *`)."""
    return " ".join(re.findall(r"[A-Za-z_][\w:]*(?:<[^>]*>)?|\d+|[*&(),]", t))


def _decl(node: dict) -> Decl:
    params = []
    for child in node.get("inner", ()):
        if child.get("kind") == "ParmVarDecl":
            t = child["type"]
            params.append(Param(child.get("name", ""), t["qualType"], t.get("desugaredQualType", t["qualType"])))
    result = node["type"]["qualType"].split("(", 1)[0].strip()
    return Decl(node["name"], result, tuple(params))


def clang_cxx(includes: list[Path]) -> list[str]:
    """Host C++ as a CUDA program's host code sees the CUDA library headers."""
    return ["clang++-15", "-x", "c++", "-std=c++17", "-w", *(f"-I{p}" for p in includes)]


def hipcc_host(includes: list[Path], compiler: list[str] | None = None) -> list[str]:
    """HIP, as hipcc compiles the migrated program (host side: the library APIs are host APIs);
    `compiler`: another release's HIP compiler command (default: the system hipcc)."""
    return [*(compiler or ["hipcc"]), "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "--cuda-host-only", "-w",
            *(f"-I{p}" for p in includes)]
