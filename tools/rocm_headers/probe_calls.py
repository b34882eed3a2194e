"""Call probes: where the signature data (rules/api/signatures/) says a library function's target takes
the arguments of the CUDA function (verdict `same`, or `cast`: the rename casts some pointers), a
probe calls the target with CUDA's parameter types as the migration writes them at the release
(`cublasHandle_t` -> `hipblasHandle_t`; the cast's type where the rename casts), in an unevaluated
operand: `using t = decltype(::hipblasSgemm(std::declval<hipblasHandle_t>(), ...));`.

CUDA's declarations are read from the CUDA library headers as tools/generate_signature_data.py
reads them (the toolkit's include directory and .cache/cuda-library-headers).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIGNATURES = ROOT / "rules" / "api" / "signatures"
_TOKEN = re.compile(r"[A-Za-z_]\w*(?:::\w+)*|\S")


def cuda_declarations() -> tuple[dict, dict]:
    """(library -> CUDA function name -> [Decl], the CUDA headers' object-like macros)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import generate_signature_data as gsd
    from header_decls import Headers, clang_cxx

    includes = [p for p in gsd.CUDA_INCLUDE if p.is_dir()]
    tu = Headers(clang_cxx(includes), [h for h, *_ in gsd.CUDA.values()])
    return {lib: tu.decls(prefix)[0] for lib, (_, prefix, _, _) in gsd.CUDA.items()}, tu.macros()


def verdicts(profile: str) -> dict[str, list]:
    return json.loads((SIGNATURES / f"{profile}.json").read_text(encoding="utf-8"))["functions"]


def _top(t: str) -> str:
    """A by-value parameter's type without its top-level const (a function's type ignores it)."""
    t = " ".join(t.split())
    if "*" not in t and "&" not in t:
        return t.removeprefix("const ").strip()
    return t.removesuffix(" const")


def migrate_type(t: str, rename) -> str:
    """A CUDA parameter type with each name the migration renames (at the release) renamed."""
    return " ".join((rename(tok) or tok) if re.match(r"[A-Za-z_]", tok) else tok for tok in _TOKEN.findall(_top(t)))


def call_code(target: str, decl, casts: dict, rename) -> str:
    args = []
    for i, p in enumerate(decl.params):
        t = casts.get(str(i)) or migrate_type(p.type, rename)
        if "[" in t:  # an array parameter is a pointer
            t = re.sub(r"\s*\[[^\]]*\]", "*", t, count=1)
        args.append(f"std::declval<{t}>()")
    return f"using t = decltype(::{target}({', '.join(args)}));"


def calls(profile: str, wanted: dict[str, str], decls: dict, macros: dict, library_of: dict[str, str], rename,
          same_as: dict[str, str] | None = None) -> dict[str, str]:
    """target name -> call probe, for the targets in `wanted` (target -> CUDA name) whose rename
    the signature data calls `same` or `cast` (`same_as`: name -> the target whose verdict it
    shares)."""
    data = verdicts(profile)
    same_as = same_as or {}
    out = {}
    for target, cuda in wanted.items():
        row = data.get(cuda)
        if row is None or row[0] not in (target, same_as.get(target)) or row[1] not in ("same", "cast"):
            continue
        lib = library_of.get(cuda)
        found = decls.get(lib, {}).get(macros.get(cuda, cuda), [])
        if len(found) != 1:
            continue
        out[target] = call_code(target, found[0], row[2] if row[1] == "cast" else {}, rename)
    return out
