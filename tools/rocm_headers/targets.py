"""Every HIP/ROCm name the built-in rules can write: the targets of the generated name tables (both
library profiles), the inline `names:` of rename rules, the headers of the include maps, and the
libraries, CMake targets and packages of the build rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from cuda2hip.api.tables import successors

from .corrections import COL, PACKAGES, is_plain_c

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


@dataclass(frozen=True)
class Target:
    name: str  # what the rules write
    library: str  # table library id (runtime, cublas, ...) or "include" / "build"
    profile: str  # hip / roc
    cuda: str  # the CUDA name (or header / library) it replaces
    added: str = ""  # the ROCm version the data says it needs
    removed: str = ""
    hand_added: bool = False  # not from HIPIFY's tables: only a header can vouch for it
    kind: str = ""  # the table row's kind (function, datatype, define)
    # the table target this name replaces from `added` on (a later release's name for it,
    # rules/api/data/releases/successors.json): the rewriter writes it only from that release
    replaces: str = ""

    @property
    def package(self) -> str | None:
        return PACKAGES[self.profile].get(self.library)


def table_targets(tables: dict[str, dict]) -> list[Target]:
    """The names the rows of `tables` (library -> generated payload) emit, in either profile, at
    some release: each row's target, and the name a later release writes in its place."""
    later = successors()
    out = []
    for lib, payload in tables.items():
        hand = set(payload.get("hand_added", ()))
        for cuda, row in payload["names"].items():
            for profile, (t, a, r) in COL.items():
                name = row[t]
                if not name or is_plain_c(name) or (profile == "hip" and lib == "cudnn"):
                    continue  # (HIPIFY's hipDNN targets have no ROCm release: never written)
                out.append(Target(name, lib, profile, cuda, row[a], row[r], cuda in hand, row[1]))
                if name in later:
                    since, new = later[name]
                    out.append(Target(new, lib, profile, cuda, since, "", False, row[1], replaces=name))
    return out


def _rules():
    for path in sorted(RULES.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "kind" in data:
            yield path, data


def inline_targets() -> list[Target]:
    out = []
    for _path, rule in _rules():
        if rule["kind"] != "rename":
            continue
        params = rule.get("params") or {}
        for cuda, hip in (rule.get("names") or {}).items():
            if hip:
                out.append(Target(hip, params.get("library", "user"), "hip", cuda, str(params.get("hip_added", "")),
                                  hand_added=True))
    return out


def include_targets() -> list[Target]:
    """(header written, for which CUDA header, profile); the runtime include rule's header too."""
    out = []
    for _path, rule in _rules():
        if rule["kind"] == "include":
            params = rule.get("params") or {}
            requires = params.get("requires") or {}
            for profile, headers in (("hip", rule.get("headers") or {}), ("roc", params.get("roc") or {})):
                for cuda, hip in headers.items():
                    if hip:
                        out.append(Target(hip, "include", profile, cuda, str(requires.get(hip, ""))))
        elif rule["kind"] == "hip-runtime-include":
            out.append(Target(rule["params"]["header"], "include", "hip", "(runtime)"))
    return out


def build_targets() -> list[tuple[str, str, str]]:
    """(what, name, CUDA name) for every library (-l), CMake target and find_package name."""
    table = yaml.safe_load((RULES / "build" / "data" / "libraries.yaml").read_text(encoding="utf-8"))
    out = []
    for entry in table:
        for profile in ("hip", "roc"):
            side = entry.get(profile)
            if not side:
                continue
            cuda = entry.get("cuda") or entry.get("target") or ""
            for what in ("lib", "target", "package"):
                if side.get(what):
                    out.append((what, side[what], cuda))
    return sorted(set(out))


# Names a fix can introduce that the name tables do not hold (builders and templates write them):
# HIP's and ROCm's own spellings and the device builtins.
_HIP_SPELLED = re.compile(r"\b(?:hip[A-Z]\w*|HIP[A-Z_]\w*|__hip\w+|__HIP\w+|roc[a-z]+_\w+|miopen[A-Z]\w*|"
                          r"__(?:ballot|shfl\w*|any|all|popcll|ffsll|clzll|threadfence\w*|syncthreads\w*|activemask|"
                          r"builtin_amdgcn_\w+|AMDGCN\w+)|warpSize)\b")


def fix_targets() -> list[Target]:
    """Names the rules' fixes introduce, from each rule's own tests (`fixed:` against `code:`) and
    docs (`use_instead:` against `example:`): what a builder or template writes. A name gets the
    lowest target release of the cases that write it (`settings: {target_rocm: R}`; a case with no
    target, like the docs, runs at the default release)."""
    from cuda2hip import rocm_releases

    out = []
    for path, rule in _rules():
        if rule.get("language", "cuda") != "cuda":
            continue
        pairs = []
        docs = rule.get("docs") or {}
        if docs.get("use_instead"):
            pairs.append((docs.get("example") or "", docs["use_instead"], rocm_releases.DEFAULT))
        for case in ((rule.get("tests") or {}).get("invalid") or ()):
            if isinstance(case, dict) and case.get("fixed"):
                target = str((case.get("settings") or {}).get("target_rocm") or rocm_releases.DEFAULT)
                pairs.append((case.get("code") or "", case["fixed"], target))
        since: dict[str, str] = {}
        for before, after, target in pairs:
            had = set(_HIP_SPELLED.findall(before))
            # code, not preprocessor lines: a macro an `#if` tests need not be defined (that is
            # the test), and the header-guard rule checks its guards against the headers itself
            code = "\n".join(line for line in after.splitlines() if not line.lstrip().startswith("#"))
            for name in _HIP_SPELLED.findall(code):
                # (the NVIDIA platform's macros are tested in #if, never declared on AMD)
                if name in had or "NVIDIA" in name:
                    continue
                if name not in since:
                    since[name] = target
                elif since[name] and (not target or rocm_releases.version_tuple(target)
                                      < rocm_releases.version_tuple(since[name])):
                    since[name] = target
        out += [Target(name, "fix", "hip", rule["code"], added, hand_added=True) for name, added in since.items()]
    return out


CUDA_INCLUDE = Path("/usr/local/cuda/include")


def kept_headers(include: Path = CUDA_INCLUDE) -> list[Target]:
    """Headers the migration keeps as they are because ROCm installs its own: Thrust's public
    headers (rocThrust keeps the `thrust/` names), listed from the CUDA toolkit's copy (CCCL's
    layout or the older one). Empty without a toolkit."""
    for base in (include / "cccl" / "thrust", include / "thrust"):
        if base.is_dir():
            return [Target(f"thrust/{p.name}", "kept", "hip", f"thrust/{p.name}") for p in sorted(base.glob("*.h"))]
    return []
