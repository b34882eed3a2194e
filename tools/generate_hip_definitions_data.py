#!/usr/bin/env python3
"""What HIP's own headers define that user code may define too, read from hipcc's AST of
`hip/hip_runtime.h` (the headers a migrated program compiles with), into
rules/api/collisions/hip-definitions.json (read by the hip-definition-collision rule).

- `vector_types`: the CUDA vector type names HIP declares as `HIP_vector_type<T, n>`
  (hip/amd_detail/amd_hip_vector_types.h), with T and n;
- `vector_members`: the operators HIP_vector_type declares as members that are not templates
  (a user's free operator with the same parameters ties with them: "use of overloaded operator
  '+=' is ambiguous"; templates lose to a user's non-template and never tie), with their
  parameter list (`HIP_vector_type<T, rank>` written `V`) and the header line;
- `vector_friends`: the operators HIP_vector_type defines as friends (not templates either: one
  function per vector type; ROCm 6.x and 7.x have binary `*` and `/`), with all their parameters;
- `functions`: functions at global scope of the HIP headers and of clang's HIP wrapper headers
  (`__clang_hip_math.h`: host and device `min`/`max`, ...), with their parameter types (typedefs of
  builtin types resolved), execution spaces and header line, and the message of a `deprecated`
  attribute where the header has one. Reserved names (`__x`) are left out.

One file per ROCm release the project compiles with (tests/harness/hip_toolchains.py): 5.2 (the
system hipcc) writes hip-definitions.json, the others hip-definitions-<release>.json; the rule
reads the release that stands for the run's --target-rocm.

Usage: python tools/generate_hip_definitions_data.py [--release 7.2] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLISIONS = ROOT / "rules" / "api" / "collisions"
AST_FLAGS = ["-std=c++17", "--cuda-host-only", "-w", "-fno-color-diagnostics", "-Xclang", "-ast-dump"]
DEFAULT_RELEASE = "5.2"


def out_path(release: str) -> Path:
    return COLLISIONS / ("hip-definitions.json" if release == DEFAULT_RELEASE else f"hip-definitions-{release}.json")
_NODE = re.compile(r"^((?:[| ] )*)[|`]-(\w+) 0x[0-9a-f]+ (.*)$")
_PATH = re.compile(r"(/[^\s:<>,]+\.h):(\d+)")
_LINE = re.compile(r"\bline:(\d+)")
_HIP_FILE = re.compile(r"/hip/|/__clang_hip_[\w]+\.h$")
_BUILTIN_WORDS = frozenset("void bool char signed unsigned short int long float double const volatile".split())


def dump(release: str) -> tuple[str, str]:
    """(the AST dump, "HIP x.y, clang N") of hip/hip_runtime.h with the release's compiler."""
    sys.path.insert(0, str(ROOT / "tests" / "harness"))
    import hip_toolchains

    toolchain = hip_toolchains.get(release)
    if toolchain is None:
        raise SystemExit(f"HIP {release}: {hip_toolchains.why_missing(release)}")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "hip.hip"
        src.write_text("#include <hip/hip_runtime.h>\n")
        proc = subprocess.run([*hip_toolchains.command(release), *AST_FLAGS, str(src)], capture_output=True,
                              text=True, env=hip_toolchains.env(release))
    if proc.returncode != 0:
        raise SystemExit(f"HIP {release}: the compiler failed:\n{proc.stderr[-2000:]}")
    return proc.stdout, f"HIP {release}, clang {toolchain.clang_version.split('.')[0]}"


def _params(signature: str) -> list[str]:
    """`'int (int, const char *)'` -> ['int', 'const char *'] (top-level commas only)."""
    inner = signature[signature.index("(") + 1:signature.rindex(")")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip() and cur.strip() != "void":
        out.append(cur.strip())
    return out


def _east_const(t: str, typedefs: dict[str, str]) -> str:
    """The spelling the rule compares: typedefs of builtins resolved, `const T *` -> `T const *`."""
    toks = re.findall(r"[A-Za-z_]\w*(?:<[^>]*>)?|[*&]+", t)
    toks = [typedefs.get(x, x) for x in toks]
    words = " ".join(toks).split()
    out: list[str] = []
    lead_const = False
    for w in words:
        if w == "const" and not out:
            lead_const = True
            continue
        if w in ("*", "&", "&&") or set(w) <= {"*", "&"}:
            if lead_const:
                out.append("const")
                lead_const = False
            out.extend(w if w in ("&&",) else list(w))
            continue
        out.append(w)
    if lead_const:
        out.append("const")
    while out and out[-1] in ("const", "volatile"):
        out.pop()
    return " ".join(out)


def parse(text: str, compiled_with: str = "HIP 5.2, clang 15") -> dict:
    lines = text.splitlines()
    current_file = ""
    typedefs: dict[str, str] = {}
    vector_types: dict[str, list] = {}
    members: list[dict] = []
    friends: list[dict] = []
    functions: dict[str, list] = {}
    in_vector = -1  # depth of HIP_vector_type's ClassTemplateDecl while inside it
    parents: dict[int, str] = {}  # depth -> kind of the latest node there
    i = 0
    while i < len(lines):
        m = _NODE.match(lines[i])
        i += 1
        if m is None:
            continue
        depth, kind, rest = len(m.group(1)) // 2, m.group(2), m.group(3)
        parents[depth] = kind
        paths = _PATH.findall(rest.split(">")[0] if ">" in rest else rest)
        if paths:
            current_file = paths[-1][0]
        where = os.path.basename(current_file)
        if in_vector >= 0 and depth <= in_vector:
            in_vector = -1
        if kind == "ClassTemplateDecl" and rest.endswith(" HIP_vector_type") and in_vector < 0 and not members:
            in_vector = depth
            continue
        if kind in ("TypedefDecl", "TypeAliasDecl"):
            tm = re.search(r" (\w+) '([^']*)'(?::'([^']*)')?$", rest)
            if tm:
                name, spelled, canon = tm.group(1), tm.group(2), tm.group(3) or tm.group(2)
                if set(canon.replace("*", " ").split()) <= _BUILTIN_WORDS:
                    typedefs[name] = canon
                vm = re.match(r"HIP_vector_type<(.+), (\d+)>$", canon)
                if vm and "HIP_vector_type" in spelled and depth == 0:
                    vector_types[name] = [vm.group(1), int(vm.group(2))]
            continue
        if in_vector >= 0 and kind == "CXXMethodDecl" and depth == in_vector + 2 and \
                parents.get(in_vector + 1) == "CXXRecordDecl":  # the template itself, not an instantiation
            mm = re.search(r" (operator\S+) '([^']*)'", rest)
            if mm and mm.group(1) != "operator=":
                params = [p.replace("HIP_vector_type<T, rank>", "V") for p in _params(mm.group(2))]
                line = _LINE.findall(rest)
                members.append({"name": mm.group(1), "params": params,
                                "header": f"hip/amd_detail/{where}:{line[-1] if line else '?'}"})
            continue
        if in_vector >= 0 and kind == "FunctionDecl" and depth == in_vector + 3 and \
                parents.get(in_vector + 2) == "FriendDecl" and parents.get(in_vector + 1) == "CXXRecordDecl":
            fm = re.search(r" (operator\S+) '([^']*)'", rest)
            if fm:
                params = [p.replace("HIP_vector_type<T, rank>", "V") for p in _params(fm.group(2))]
                line = _LINE.findall(rest)
                friends.append({"name": fm.group(1), "params": params,
                                "header": f"hip/amd_detail/{where}:{line[-1] if line else '?'}"})
            continue
        at_global = depth == 0 or (depth == 1 and parents.get(0) == "LinkageSpecDecl")
        if kind == "FunctionDecl" and at_global and _HIP_FILE.search(current_file):
            fm = re.search(r" (?:used |referenced |invalid )*(\w+) '([^']*)'(?::'[^']*')?((?: \w+)*)$", rest)
            if not fm or fm.group(1).startswith("__") or "implicit" in rest.split("'")[0]:
                continue
            attrs = set()
            deprecated = None
            j = i
            while j < len(lines):
                cm = _NODE.match(lines[j])
                if cm is None or len(cm.group(1)) // 2 <= depth:
                    break
                if len(cm.group(1)) // 2 == depth + 1:
                    attrs.add(cm.group(2))
                    if cm.group(2) == "DeprecatedAttr":
                        dm = re.search(r'> "((?:[^"\\]|\\.)*)"', cm.group(3))
                        deprecated = dm.group(1) if dm else ""
                j += 1
            spaces = sorted({s for s, a in (("host", "CUDAHostAttr"), ("device", "CUDADeviceAttr")) if a in attrs}
                            or {"host"})
            line = _LINE.findall(rest)
            entry = {"params": [_east_const(p, typedefs) for p in _params(fm.group(2))], "spaces": spaces,
                     "defined": "CompoundStmt" in attrs,
                     "header": f"{'hip/' if '/hip/' in current_file else ''}{current_file.split('/hip/')[-1] if '/hip/' in current_file else where}"
                               f":{line[-1] if line else '?'}"}
            if deprecated is not None:
                entry["deprecated"] = deprecated
            if entry not in functions.setdefault(fm.group(1), []):
                functions[fm.group(1)].append(entry)
    return {"source": f"tools/generate_hip_definitions_data.py: hipcc's AST of hip/hip_runtime.h ({compiled_with})",
            "vector_types": dict(sorted(vector_types.items())), "vector_members": members,
            "vector_friends": friends,
            "functions": dict(sorted(functions.items()))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default=DEFAULT_RELEASE, help="ROCm release whose compiler to read (default 5.2)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed data differs")
    args = ap.parse_args(argv)
    OUT = out_path(args.release)
    text = json.dumps(parse(*dump(args.release)), indent=1, sort_keys=True) + "\n"
    if args.check:
        if not OUT.is_file() or OUT.read_text(encoding="utf-8") != text:
            print(f"stale data (run tools/generate_hip_definitions_data.py): {OUT}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
