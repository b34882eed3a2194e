"""The header facts: for every name the rules write, which fetched release declares it, in which
file of which package (tools/data/rocm-headers.json)."""

from __future__ import annotations

import json

from .corrections import lookup_name
from .declarations import compiler_declarations
from .releases import OPTIONS, Package

COMPILER = "compiler"  # the pseudo-suite of what clang declares itself (see compiler_declarations)

# A name declared several ways is cited by its most telling kind.
KIND_ORDER = ("function", "type", "enumerator", "macro", "variable", "namespace")


def _best(kinds: dict[str, str]) -> tuple[str, str] | None:
    for kind in KIND_ORDER:
        if kind in kinds:
            return kind, kinds[kind]
    return None  # members only


def collect(suites: dict[str, dict[str, Package]], manifest: dict, targets, build) -> dict:
    wanted = sorted({lookup_name(t.name) for t in targets if t.library != "include"})
    headers = sorted({t.name for t in targets if t.library == "include"})
    facts: dict = {
        "source": ("Debian's ROCm -dev packages (fetched by tests/harness/fetch_rocm_release_headers.py from "
                   f"{manifest.get('mirror', 'Debian')}), parsed with clang (tools/rocm_headers/declarations.py); "
                   "written by tools/audit_rule_data.py --write"),
        "releases": {}, "missing": {}, "unparsed": {},
        "names": {n: [] for n in wanted}, "headers": {h: [] for h in headers},
        "libraries": {}, "cmake_targets": {}, "cmake_packages": {},
    }
    for what, name, _cuda in build:
        facts[{"lib": "libraries", "target": "cmake_targets", "package": "cmake_packages"}[what]][name] = []
    hip = next((p for pkgs in suites.values() for p in pkgs.values() if p.name == "libamdhip64-dev"), None)
    if hip is not None:
        compiler = compiler_declarations(hip.root / "usr" / "include",
                                         tuple(n for n in wanted if n.startswith("__builtin_")))
        for name in wanted:
            best = _best(compiler.names.get(name, {}))
            if best:
                facts["names"][name].append([COMPILER, "clang-15", best[1], best[0]])
    for suite, pkgs in suites.items():
        entry = manifest["suites"][suite]
        if entry.get("missing"):
            facts["missing"][suite] = entry["missing"]
        if not pkgs:
            continue
        facts["releases"][suite] = {p.name: p.version for p in pkgs.values()}
        for pkg in pkgs.values():
            decl = pkg.declarations()
            if decl.failed:
                facts["unparsed"][f"{suite} {pkg.name}"] = decl.failed
            extra = {opt: pkg.declarations((opt,)) for opt in OPTIONS.get(pkg.name, ())}
            for name in wanted:
                best = _best(decl.names.get(name, {}))
                if best:
                    facts["names"][name].append([suite, pkg.name, best[1], best[0]])
                    continue
                for opt, more in extra.items():
                    best = _best(more.names.get(name, {}))
                    if best:
                        facts["names"][name].append([suite, pkg.name, best[1], f"{best[0]} -D{opt}"])
                        break
            own = pkg.headers()
            for h in headers:
                if h in own:
                    facts["headers"][h].append([suite, pkg.name])
            for key, provided in (("libraries", pkg.libraries()), ("cmake_targets", pkg.cmake_targets()),
                                  ("cmake_packages", pkg.cmake_packages())):
                for name in facts[key]:
                    if name in provided:
                        facts[key][name].append([suite, pkg.name])
    return facts


def render(facts: dict) -> str:
    """One name per line: diffs of a re-run show what moved."""
    lines = ["{"]
    keys = list(facts)
    for i, key in enumerate(keys):
        value = facts[key]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(value, dict) and key in ("names", "headers", "libraries", "cmake_targets", "cmake_packages"):
            lines.append(f"  {json.dumps(key)}: {{")
            items = sorted(value.items())
            for j, (name, rows) in enumerate(items):
                lines.append(f"    {json.dumps(name)}: {json.dumps(rows)}" + ("," if j < len(items) - 1 else ""))
            lines.append("  }" + end)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"
