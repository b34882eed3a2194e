#!/usr/bin/env python3
"""Find the CUDA types that are different types in CUDA but one type after renaming, from the
name tables and the real headers, and write them to rules/api/collisions/{hip,roc}.json (read by
the rename-collision rule: two overloads that differ only in such types become one function).

Each type name of the tables is resolved to the type it denotes with every typedef resolved, as
the compiler's mangling encodes it (header_decls.Headers.canonical_types): the CUDA names by clang
as host C++ with the CUDA headers (`CUresult` is `cudaError_enum`, `cudaError_t` is `cudaError`,
`CUstream` and `cudaStream_t` are both `CUstream_st *`), their HIP/roc targets by hipcc with the
HIP and ROCm library headers (`hipError_t`; `hipDeviceptr_t` and `hipblasHandle_t` are both
`void *`). A HIP type is a *collision class* when the CUDA names that become it denote two or
more CUDA types; a class that is a builtin type (`void *`) also counts the builtin spelling
itself, which user code may write (`f(void *)` next to `f(CUdeviceptr)`).

Usage: python tools/generate_collision_data.py [--cuda-include DIR]... [--rocm-include DIR]... [--check]
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

from header_decls import Headers, clang_cxx, hipcc_host  # noqa: E402

from cuda2hip.api.tables import all_table_paths, load_table  # noqa: E402
from cuda2hip.checks.api.rename import resolve  # noqa: E402

OUT = ROOT / "rules" / "api" / "collisions"
CUDA_INCLUDE = [Path("/usr/local/cuda/include"), ROOT / ".cache" / "cuda-library-headers" / "include"]
ROCM_INCLUDE = [ROOT / ".cache" / "rocm-library-headers" / "usr" / "include"]

CUDA_HEADERS = ["cuda_runtime.h", "cuda.h", "cuComplex.h", "cublas_v2.h", "cublasLt.h", "curand.h", "cufft.h",
                "cusparse.h", "cusolverDn.h", "cudnn.h", "nvrtc.h"]
HIP_HEADERS = ["hip/hip_runtime.h", "hip/hiprtc.h", "hip/hip_complex.h", "hipblas/hipblas.h", "hiprand/hiprand.h",
               "hipfft/hipfft.h", "hipsparse/hipsparse.h", "hipsolver/hipsolver.h", "rocblas/rocblas.h",
               "rocrand/rocrand.h", "rocsparse/rocsparse.h", "rocsolver/rocsolver.h", "miopen/miopen.h"]
PROFILES = ("hip", "roc")
_BUILTIN = re.compile(r"^(?:(?:void|bool|char|signed|unsigned|short|int|long|float|double)\b ?|\* ?|const ?)+$")


def type_entries():
    """Every type-shaped name of the tables (kind `datatype`: types and enumerators alike; the
    compiler tells them apart)."""
    out = {}
    for path in all_table_paths():
        for entry in load_table(path).values():
            if entry.kind == "datatype":
                out.setdefault(entry.cuda, entry)
    return out


def classes(entries, cuda: dict[str, str], hip: dict[str, str], profile: str) -> dict:
    """HIP type -> the CUDA names that become it, for the types that join distinct CUDA types."""
    members: dict[str, dict[str, str]] = {}
    for name, entry in entries.items():
        target = resolve(entry, profile, None, "", True).target
        if target is None or name not in cuda or target not in hip:
            continue
        members.setdefault(hip[target], {})[name] = cuda[name]
    out = {}
    for canon, names in sorted(members.items()):
        kinds = set(names.values())
        if _BUILTIN.match(canon):
            kinds.add(canon)  # the builtin spelled as it is
        if len(kinds) > 1:
            out[canon] = dict(sorted(names.items()))
    return out


def build(cuda_include: list[Path], rocm_include: list[Path]) -> dict[str, dict]:
    entries = type_entries()
    cuda_tu = Headers(clang_cxx(cuda_include), CUDA_HEADERS)
    hip_tu = Headers(hipcc_host(rocm_include), HIP_HEADERS, env={"HIP_PLATFORM": "amd"})
    cuda = cuda_tu.canonical_types(sorted(entries))
    targets = sorted({t for p in PROFILES for e in entries.values()
                      if (t := resolve(e, p, None, "", True).target)})
    hip = hip_tu.canonical_types(targets)
    out = {}
    for profile in PROFILES:
        found = classes(entries, cuda, hip, profile)
        joined = set().union(*(set(v) for v in found.values())) if found else set()
        out[profile] = {
            "source": "tools/generate_collision_data.py: CUDA types by clang++ with "
                      f"{', '.join(CUDA_HEADERS)}; HIP types by hipcc with {', '.join(HIP_HEADERS)}",
            # HIP type (typedefs resolved) -> {CUDA name: the CUDA type it denotes}
            "classes": found,
            # every HIP name of those types -> its type (user code may spell any of them)
            "hip": {h: c for h, c in sorted(hip.items()) if c in found},
            "cuda": {n: cuda[n] for n in sorted(joined)},
        }
    return out


def render(payload: dict) -> str:
    return json.dumps(payload, indent=1, sort_keys=True) + "\n"


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
        print("stale collision data (run tools/generate_collision_data.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
