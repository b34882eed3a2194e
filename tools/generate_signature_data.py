#!/usr/bin/env python3
"""Compare the signature of every CUDA library function the name tables rename with the
signature of its hip*/roc* target, in the real headers, and write the verdicts to
rules/api/signatures/{hip,roc}.json (read by the rename rules: a rename is a safe fix only where
the verdict allows it).

The CUDA side is read from the CUDA library headers (`.cache/cuda-library-headers`, fetched by
tests/harness/fetch_cuda_library_headers.py, plus the toolkit's include directory) with clang as
host C++; the HIP/ROCm side from the ROCm library headers (`.cache/rocm-library-headers`, fetched
by tests/harness/fetch_rocm_library_headers.sh, plus /usr/include) with hipcc, as the migrated
program is compiled. Each parameter type of the CUDA declaration is migrated with the name tables
(`cublasHandle_t` -> `rocblas_handle`, `cuComplex` -> `hipComplex`) and compared with the target's:

  same     every parameter and the result have the target's type (typedefs resolved: `int` is
           `rocblas_int`; where the spellings cannot tell, hipcc decides with std::is_same), or
           an integer of the same width and signedness
  cast     the same, except pointers to a type the target spells differently with the same layout
           (LAYOUTS, each with the header that shows it): the rename converts those arguments
  differs  anything else (parameter count, a type): the difference, for the finding's message
  unchecked  no single declaration on one side (a device function, an overloaded name)

Usage: python tools/generate_signature_data.py [--cuda-include DIR]... [--rocm-include DIR]... [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from header_decls import Decl, Headers, clang_cxx, hipcc_host  # noqa: E402

from cuda2hip.api.tables import all_table_paths, load_table  # noqa: E402
from cuda2hip.checks.api.rename import HIP_LIBRARY, NO_ROCM_RELEASE, ROC_LIBRARY, resolve  # noqa: E402

OUT = ROOT / "rules" / "api" / "signatures"
CUDA_INCLUDE = [Path("/usr/local/cuda/include"), ROOT / ".cache" / "cuda-library-headers" / "include"]
ROCM_INCLUDE = [ROOT / ".cache" / "rocm-library-headers" / "usr" / "include"]

# library -> CUDA header, the prefix its functions share, and the CUDA library's version macros
CUDA = {
    "cublas": ("cublas_v2.h", "cublas", "cuBLAS", ("CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH")),
    "curand": ("curand.h", "curand", "cuRAND", ("CURAND_VER_MAJOR", "CURAND_VER_MINOR", "CURAND_VER_PATCH")),
    "cusparse": ("cusparse.h", "cusparse", "cuSPARSE",
                 ("CUSPARSE_VER_MAJOR", "CUSPARSE_VER_MINOR", "CUSPARSE_VER_PATCH")),
    "cusolver": ("cusolverDn.h", "cusolver", "cuSOLVER",
                 ("CUSOLVER_VER_MAJOR", "CUSOLVER_VER_MINOR", "CUSOLVER_VER_PATCH")),
    "cudnn": ("cudnn.h", "cudnn", "cuDNN", ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL")),
    "cufft": ("cufft.h", "cufft", "cuFFT", ("CUFFT_VER_MAJOR", "CUFFT_VER_MINOR", "CUFFT_VER_PATCH")),
}
# target library -> header, function prefix, version macros
TARGETS = {
    "hipBLAS": ("hipblas/hipblas.h", "hipblas", ("hipblasVersionMajor", "hipblasVersionMinor", "hipblasVersionPatch")),
    "hipRAND": ("hiprand/hiprand.h", "hiprand", ("HIPRAND_VERSION",)),
    "hipSPARSE": ("hipsparse/hipsparse.h", "hipsparse",
                  ("hipsparseVersionMajor", "hipsparseVersionMinor", "hipsparseVersionPatch")),
    "hipSOLVER": ("hipsolver/hipsolver.h", "hipsolver",
                  ("hipsolverVersionMajor", "hipsolverVersionMinor", "hipsolverVersionPatch")),
    "hipFFT": ("hipfft/hipfft.h", "hipfft", ("hipfftVersionMajor", "hipfftVersionMinor", "hipfftVersionPatch")),
    "rocBLAS": ("rocblas/rocblas.h", "rocblas_",
                ("ROCBLAS_VERSION_MAJOR", "ROCBLAS_VERSION_MINOR", "ROCBLAS_VERSION_PATCH")),
    "rocRAND": ("rocrand/rocrand.h", "rocrand_", ("ROCRAND_VERSION",)),
    "rocSPARSE": ("rocsparse/rocsparse.h", "rocsparse_",
                  ("ROCSPARSE_VERSION_MAJOR", "ROCSPARSE_VERSION_MINOR", "ROCSPARSE_VERSION_PATCH")),
    "rocSOLVER": ("rocsolver/rocsolver.h", "rocsolver_",
                  ("ROCSOLVER_VERSION_MAJOR", "ROCSOLVER_VERSION_MINOR", "ROCSOLVER_VERSION_PATCH")),
    "MIOpen": ("miopen/miopen.h", "miopen", ("MIOPEN_VERSION_MAJOR", "MIOPEN_VERSION_MINOR", "MIOPEN_VERSION_PATCH")),
}

# (migrated CUDA type, target type) with the same size and layout: a pointer to one may be passed
# as a pointer to the other. Each with the header lines that show it.
_HIP_COMPLEX = ("hip/amd_detail/amd_hip_complex.h (HIP): `typedef float2 hipFloatComplex;`, "
                "`typedef double2 hipDoubleComplex;`, `typedef hipFloatComplex hipComplex;`")
LAYOUTS = {
    ("hipFloatComplex", "rocblas_float_complex"): (
        "rocblas/internal/rocblas-complex-types.h: the C definition is `typedef struct { float x, y; } "
        "rocblas_float_complex;`, the C++ one `rocblas_complex_num<float>` with the members `T x, y` only, and "
        "with ROCM_MATHLIBS_API_USE_HIP_COMPLEX the API is declared with `typedef hipFloatComplex "
        "rocblas_float_complex;`; " + _HIP_COMPLEX),
    ("hipDoubleComplex", "rocblas_double_complex"): (
        "rocblas/internal/rocblas-complex-types.h: `typedef struct { double x, y; } rocblas_double_complex;` "
        "(C), `rocblas_complex_num<double>` (C++), `typedef hipDoubleComplex rocblas_double_complex;` with "
        "ROCM_MATHLIBS_API_USE_HIP_COMPLEX; " + _HIP_COMPLEX),
    ("hipFloatComplex", "rocsparse_float_complex"): (
        "rocsparse/rocsparse-complex-types.h: `typedef struct { float x, y; } rocsparse_float_complex;` (C), "
        "`rocsparse_complex_num<float>` with the members `T x, y` (C++); " + _HIP_COMPLEX),
    ("hipDoubleComplex", "rocsparse_double_complex"): (
        "rocsparse/rocsparse-complex-types.h: `typedef struct { double x, y; } rocsparse_double_complex;` (C), "
        "`rocsparse_complex_num<double>` (C++); " + _HIP_COMPLEX),
    ("__half", "rocblas_half"): (
        "rocblas/internal/rocblas-types.h: `typedef struct rocblas_half { uint16_t data; } rocblas_half;`; "
        "hip/amd_detail/amd_hip_fp16.h: `struct __half` holds one `_Float16` (in a union with `unsigned short`)"),
    ("hipFloatComplex", "hipblasComplex"): (
        "hipblas/hipblas.h: `struct hipblasComplex` has the members `float x, y` only, and with "
        "ROCM_MATHLIBS_API_USE_HIP_COMPLEX the API is declared with `typedef hipFloatComplex hipblasComplex;`; "
        + _HIP_COMPLEX),
    ("hipDoubleComplex", "hipblasDoubleComplex"): (
        "hipblas/hipblas.h: `struct hipblasDoubleComplex` has the members `double x, y` only, and with "
        "ROCM_MATHLIBS_API_USE_HIP_COMPLEX `typedef hipDoubleComplex hipblasDoubleComplex;`; " + _HIP_COMPLEX),
    ("__half", "hipblasHalf"): (
        "hipblas/hipblas.h: `typedef uint16_t hipblasHalf;` (with HIPBLAS_USE_HIP_HALF: `typedef __half "
        "hipblasHalf;`); hip/amd_detail/amd_hip_fp16.h: `struct __half` holds one `_Float16`"),
}
SYNONYMS = {"hipComplex": "hipFloatComplex"}  # typedefs of hip_complex.h
# integer types by (bytes, signed) on the LP64 targets of ROCm: a value of one passes to the other
INTEGERS = {"int": (4, True), "unsigned int": (4, False), "long": (8, True), "long long": (8, True),
            "unsigned long": (8, False), "unsigned long long": (8, False), "int64_t": (8, True)}
_TOKEN = re.compile(r"[A-Za-z_]\w*(?:::\w+)*|\S")
_BUILTIN = {"const", "volatile", "unsigned", "signed", "char", "short", "int", "long", "float", "double",
            "void", "bool", "_Bool"}


def _top(t: str) -> str:
    """A parameter type without the top-level const of a by-value parameter (it does not change the
    function's type)."""
    t = " ".join(t.split())
    if "*" not in t and "&" not in t:
        return t.removeprefix("const ").strip()
    return t.removesuffix(" const").removesuffix("*const").strip() + ("*" if t.endswith("*const") else "")


class Migrator:
    """Types as the migration writes them under a profile."""

    def __init__(self, profile: str):
        self.profile = profile
        self.names = {}
        for path in all_table_paths():
            for entry in load_table(path).values():
                self.names[entry.cuda] = entry
        self._cache: dict[str, str] = {}

    def name(self, cuda: str) -> str:
        got = self._cache.get(cuda)
        if got is None:
            entry = self.names.get(cuda)
            # (every name some release writes: one a newer release removed still has a verdict
            # for the releases that have it)
            res = resolve(entry._replace(hip_removed="", roc_removed=""), self.profile, None, "", True) \
                if entry is not None else None
            got = self._cache[cuda] = res.target if res is not None and res.target else cuda
        return got

    def type(self, t: str) -> str:
        return " ".join(SYNONYMS.get(self.name(tok), self.name(tok)) for tok in _TOKEN.findall(_top(t)))


# typedefs of the C/C++ headers the library headers use, on the LP64 targets of ROCm
STD_TYPEDEFS = {"size_t": "unsigned long", "ptrdiff_t": "long", "int64_t": "long", "int32_t": "int",
                "int16_t": "short", "int8_t": "signed char", "uint64_t": "unsigned long",
                "uint32_t": "unsigned int", "uint16_t": "unsigned short", "uint8_t": "unsigned char"}


class Types:
    """Type spellings compared with typedefs to builtin types resolved (`rocblas_int` is `int`)."""

    def __init__(self, typedefs: dict[str, str]):
        self.typedefs = {**typedefs, **STD_TYPEDEFS}
        self.proven: set[tuple[str, str]] = set()  # pairs the compiler found to be one type
        self.asked: set[tuple[str, str]] = set()  # pairs the spellings could not decide

    def tokens(self, t: str, depth: int = 0) -> list[str]:
        out = []
        for tok in _TOKEN.findall(_top(t)):
            tok = SYNONYMS.get(tok, tok)
            resolved = self.typedefs.get(tok)
            if resolved is not None and depth < 8:
                expanded = self.tokens(resolved, depth + 1)
                if _plain(" ".join(expanded)):
                    out.extend(expanded)
                    continue
            out.append(tok)
        return out

    def same(self, migrated: str, target: str) -> bool:
        a, b = self.tokens(migrated), self.tokens(target)
        if a == b:
            return True
        if b == ["const", *a] and a.count("*") == 1:
            return True  # T * converts to const T * (a qualification conversion)
        # integers of one width and signedness (by value): `long long` passes to `int64_t`
        x, y = " ".join(a), " ".join(b)
        if x in INTEGERS and INTEGERS[x] == INTEGERS.get(y):
            return True
        pair = (" ".join(_TOKEN.findall(_top(migrated))), " ".join(_TOKEN.findall(_top(target))))
        if pair in self.proven:
            return True
        self.asked.add(pair)
        return False

    @staticmethod
    def cast(migrated: str, target: str) -> bool:
        # as spelled: `hipblasHalf` is a typedef of `uint16_t`, yet the layout pair names it
        a = [SYNONYMS.get(t, t) for t in _TOKEN.findall(_top(migrated))]
        b = [SYNONYMS.get(t, t) for t in _TOKEN.findall(_top(target))]
        if b[:1] == ["const"] and a[:1] != ["const"]:
            a = ["const", *a]  # the cast may add const (as the call itself would)
        if len(a) != len(b) or "*" not in a:
            return False
        return a != b and all(x == y or (x, y) in LAYOUTS for x, y in zip(a, b))


def _plain(t: str) -> bool:
    return all(tok in _BUILTIN or not (tok[0].isalnum() or tok[0] == "_") for tok in _TOKEN.findall(t))


def compare(cuda: Decl, target: Decl, mig: Migrator, types: Types, labels: tuple[str, str]) -> list:
    """[verdict, detail] of calling `target` with the arguments of a call of `cuda`."""
    lc, lt = labels
    if len(cuda.params) != len(target.params):
        return ["differs", f"{lt}'s `{target.name}` takes {len(target.params)} parameters, {lc}'s "
                           f"`{cuda.name}` {len(cuda.params)}"]
    casts, diffs = {}, []
    for i, (cp, tp) in enumerate(zip(cuda.params, target.params)):
        migrated = mig.type(cp.type)
        if types.same(migrated, tp.type):
            continue
        if types.cast(migrated, tp.type):
            casts[str(i)] = " ".join(tp.type.split())
            continue
        diffs.append(f"parameter {i + 1} `{cp.name}` is `{' '.join(cp.type.split())}` in {lc}, "
                     f"`{' '.join(tp.type.split())}` in {lt}")
    if not types.same(mig.type(cuda.result), target.result):
        diffs.append(f"it returns `{cuda.result}` in {lc}, `{target.result}` in {lt}")
    if diffs:
        more = f" (and {len(diffs) - 2} more differences)" if len(diffs) > 2 else ""
        return ["differs", "; ".join(diffs[:2]) + more]
    return ["cast", casts] if casts else ["same"]


def build(cuda_include: list[Path], rocm_include: list[Path]) -> dict[str, dict]:
    cuda_tu = Headers(clang_cxx(cuda_include), [h for h, *_ in CUDA.values()])
    target_tu = Headers(hipcc_host(rocm_include), [h for h, *_ in TARGETS.values()] + ["miopen/version.h"],
                        env={"HIP_PLATFORM": "amd"})
    cuda_decls = {lib: cuda_tu.decls(prefix)[0] for lib, (_, prefix, _, _) in CUDA.items()}
    target_decls: dict[str, list[Decl]] = {}
    typedefs: dict[str, str] = {}
    for _, prefix, _ in TARGETS.values():
        functions, names = target_tu.decls(prefix)
        target_decls.update(functions)
        typedefs.update(names)
    types = Types(typedefs)
    macros = cuda_tu.macros()
    headers = {
        "cuda": {label: cuda_tu.version(*names) for _, _, label, names in CUDA.values()},
        "target": {label: target_tu.version(*names) for label, (_, _, names) in TARGETS.items()},
    }
    out = {}
    for profile in ("hip", "roc"):
        mig = Migrator(profile)
        # the spellings decide most parameters; the compiler decides the rest (typedefs of HIP
        # types, e.g. MIOpen's `miopenAcceleratorQueue_t` is `hipStream_t`), then the verdicts
        _verdicts(mig, types, cuda_decls, target_decls, macros)
        types.proven |= target_tu.same_types(sorted(types.asked - types.proven))
        out[profile] = {
            "source": "generated by tools/generate_signature_data.py from the headers of the versions in `headers`",
            "headers": headers,
            "layouts": {f"{a} -> {b}": why for (a, b), why in LAYOUTS.items()},
            "columns": ["target", "verdict", "detail"],
            "functions": _verdicts(mig, types, cuda_decls, target_decls, macros),
        }
    return out


def _verdicts(mig: Migrator, types: Types, cuda_decls: dict, target_decls: dict, macros: dict) -> dict[str, list]:
    """The verdict on each function rename of `mig`'s profile."""
    profile = mig.profile
    verdicts = {}
    for cuda_name, entry in sorted(mig.names.items()):
        lib = entry.library
        if entry.kind != "function" or lib not in CUDA or (profile == "hip" and lib in NO_ROCM_RELEASE):
            continue
        target = mig.name(cuda_name)
        if target == cuda_name:
            continue
        roc = profile == "roc" and lib in ROC_LIBRARY
        labels = (CUDA[lib][2], ROC_LIBRARY[lib] if roc else HIP_LIBRARY[lib])
        # cublas_v2.h: `#define cublasCreate cublasCreate_v2`
        declared = macros.get(cuda_name, cuda_name)
        found, wanted = cuda_decls[lib].get(declared, []), target_decls.get(target, [])
        if len(found) != 1 or len(wanted) != 1:
            side = (f"{CUDA[lib][0]} declares no host function `{declared}`" if not found else
                    f"{labels[0]}'s `{declared}` is overloaded" if len(found) > 1 else
                    f"{labels[1]}'s headers declare no function `{target}`" if not wanted else
                    f"{labels[1]}'s `{target}` is overloaded")
            verdicts[cuda_name] = [target, "unchecked", side]
            continue
        verdicts[cuda_name] = [target, *compare(found[0], wanted[0], mig, types, labels)]
    return verdicts


def render(payload: dict) -> str:
    head = {k: v for k, v in payload.items() if k != "functions"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()] + ['  "functions": {']
    items = list(payload["functions"].items())
    lines += [f"    {json.dumps(k)}: {json.dumps(v)}" + ("," if i < len(items) - 1 else "")
              for i, (k, v) in enumerate(items)]
    return "\n".join(lines + ["  }", "}"]) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuda-include", type=Path, action="append")
    ap.add_argument("--rocm-include", type=Path, action="append")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed data differs")
    args = ap.parse_args(argv)
    stale = []
    for profile, payload in build(args.cuda_include or CUDA_INCLUDE, args.rocm_include or ROCM_INCLUDE).items():
        path, text = args.out / f"{profile}.json", render(payload)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        print("stale signature data (run tools/generate_signature_data.py):\n  " + "\n  ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
