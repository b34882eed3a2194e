"""The compile probes: for every name the rules can write, a line of HIP code that uses it, in one
translation unit per library (its headers included the way migrated code includes them).

A probe's form follows what the header facts say the name is at that release: a type is declared
through (`::hipStream_t* v = nullptr;`), a value used in an expression (`decltype((hipSuccess))`),
a macro tested (`#ifndef`), a namespace aliased; a function is called with the migrated argument
types where its signature is known (probe_calls.py), else named (`using ::hipMalloc;`). A probe
whose form fails is tried again by name alone: a class template or an overloaded name passes that
way, and the facts record which form passed. Headers of the include maps are probed by including
them after hip/hip_runtime.h.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .corrections import lookup_name
from .targets import table_targets

# The headers each library's probes include (after hip/hip_runtime.h, each only where the release
# has it): the headers migrated code includes (the include maps' targets), plus HIP's own headers
# that declare the runtime's names (GL interop, the half/bfloat16/fp8 types, cooperative groups).
HIP_HEADERS = ("hip/hip_complex.h", "hip/hiprtc.h", "hip/hip_fp16.h", "hip/hip_bf16.h", "hip/hip_fp8.h",
               "hip/hip_cooperative_groups.h", "hip/hip_math_constants.h", "hip/hip_gl_interop.h",
               "hip/library_types.h")
GROUP_HEADERS = {
    "HIP": HIP_HEADERS,
    "hipBLAS": ("hipblas/hipblas.h",),
    "hipBLASLt": ("hipblaslt/hipblaslt.h", "hipblaslt/hipblaslt-ext.hpp"),
    "hipRAND": ("hiprand/hiprand.h", "hiprand/hiprand_kernel.h"),
    "hipFFT": ("hipfft/hipfft.h", "hipfft/hipfftXt.h"),
    "hipSPARSE": ("hipsparse/hipsparse.h",),
    "hipSOLVER": ("hipsolver/hipsolver.h",),
    "hipCUB": ("hipcub/hipcub.hpp",),
    "rocBLAS": ("rocblas/rocblas.h",),
    "rocRAND": ("rocrand/rocrand.h", "rocrand/rocrand_kernel.h"),
    "rocSPARSE": ("rocsparse/rocsparse.h",),
    "rocSOLVER": ("rocsolver/rocsolver.h",),
    "MIOpen": ("miopen/miopen.h",),
}
# Documented opt-in switches a library's probes are compiled with (releases.OPTIONS: the names
# cuda2hip writes for them need it, and its notes say so).
GROUP_DEFINES = {"MIOpen": ("MIOPEN_BETA_API",)}
GROUP_OF_PACKAGE = {
    "libamdhip64-dev": "HIP", "libhipblas-dev": "hipBLAS", "libhipblaslt-dev": "hipBLASLt",
    "libhiprand-dev": "hipRAND", "libhipfft-dev": "hipFFT", "libhipsparse-dev": "hipSPARSE",
    "libhipsolver-dev": "hipSOLVER", "libhipcub-dev": "hipCUB", "librocblas-dev": "rocBLAS",
    "librocrand-dev": "rocRAND", "librocsparse-dev": "rocSPARSE", "librocsolver-dev": "rocSOLVER",
    "libmiopen-dev": "MIOpen",
}
INCLUDE = "include"  # the group of the include-map headers
_QUALIFIED = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:<[\w\s,]*>)?")


@dataclass(frozen=True)
class Probe:
    key: str  # what the result is recorded under (the name, or the header)
    group: str  # the translation unit it goes into
    form: str  # call / type / value / macro / namespace / name / include
    code: str  # one line (macro: three)
    fallback: str = ""  # the name-only form, tried where `code` fails


def qualified(name: str) -> str:
    """`::name` for a global name (so that a probe's own namespace cannot shadow it)."""
    return name if "::" in name else "::" + name


def name_code(name: str) -> str:
    """`using ::name;`, or for a plain identifier that may be a macro, `#ifndef` around it."""
    bare = re.sub(r"<.*>$", "", name)
    if "::" in bare:
        return f"using {bare};"
    return f"#ifndef {bare}\nnamespace n {{ using ::{bare}; }}\n#endif"


def form_code(name: str, kind: str) -> tuple[str, str]:
    """(form, code) of a probe of `name`, declared as a `kind` (header facts: type, enumerator,
    macro, variable, function, namespace)."""
    q = qualified(name)
    if kind == "macro":
        return "macro", f"#ifndef {name}\n#error \"{name} is not defined\"\n#endif"
    if kind == "type":
        return "type", f"{q}* v = nullptr;"
    if kind in ("enumerator", "variable"):
        return "value", f"using t = decltype(({q}));"
    if kind == "namespace":
        return "namespace", f"namespace a = {q};"
    return "name", name_code(name)


def group_of(package: str | None, name: str) -> str:
    return GROUP_OF_PACKAGE.get(package or "", "HIP")


def declaring_package(facts: dict, name: str) -> str | None:
    """The package whose headers declare `name` (header facts), for names of no table."""
    for r in facts.get("names", {}).get(lookup_name(name)) or ():
        if r[0] != "compiler":
            return r[1]
    return None


@dataclass(frozen=True)
class Wanted:
    """A name to probe: what it is written for and where the facts say it is declared."""

    name: str
    group: str
    kind: str  # header facts' kind at the release ("" unknown)


def table_names(tables: dict[str, dict]) -> dict[str, str]:
    """Every name the name tables write at some release, both profiles (targets.table_targets):
    name -> its library's Debian package."""
    out: dict[str, str] = {}
    for t in table_targets(tables):
        if _QUALIFIED.fullmatch(t.name):
            out.setdefault(t.name, t.package or "libamdhip64-dev")
    return out


def kind_at(facts: dict, name: str, suite: str) -> str:
    """The kind the header facts give `name` in `suite`, else in any suite, else the compiler's
    ("" if none)."""
    rows = facts.get("names", {}).get(lookup_name(name)) or ()
    for want in (suite, None, "compiler"):
        for r in rows:
            if (r[0] == want) if want else r[0] != "compiler":
                return r[3].split(" ", 1)[0]
    return ""


_PRIVATE = re.compile(r"(?:^|/)(?:amd_detail|nvidia_detail|detail|internal|backend|rocprim)/")


def cited_header(facts: dict, name: str, suite: str) -> str | None:
    """The public header that declares `name` in `suite` by the header facts (None for a private
    one: the library's main header includes those)."""
    for r in facts.get("names", {}).get(lookup_name(name)) or ():
        if r[0] == suite:
            return None if _PRIVATE.search(r[2]) else r[2]
    return None


def make(wanted: Wanted, calls: dict[str, str]) -> Probe:
    """The probe of one name (`calls`: name -> call code, where the signature is known)."""
    if wanted.name in calls:
        return Probe(wanted.name, wanted.group, "call", calls[wanted.name], name_code(wanted.name))
    form, code = form_code(wanted.name, wanted.kind)
    fallback = name_code(wanted.name) if form in ("type", "value", "namespace") else ""
    return Probe(wanted.name, wanted.group, form, code, fallback)


def include_probes(headers: list[str]) -> list[Probe]:
    return [Probe(h, INCLUDE, "include", f"#include <{h}>") for h in headers]
