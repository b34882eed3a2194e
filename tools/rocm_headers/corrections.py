"""The header facts (tools/data/rocm-headers.json, written by tools/audit_rule_data.py) and how they
correct the ROCm versions HIPIFY's tables give (applied by tools/generate_rule_data.py).

For each target name and the package of its library (hipBLAS for a cuBLAS name, rocBLAS for its
--roc name, ...), the facts say in which of the checked releases (one per Debian suite that has the
package) a header declares it. Where the headers contradict the tables, the header wins:

- declared in a release older than HIPIFY's "added" version, or missing from a release the tables
  say has it: "added" becomes the first checked release that declares it;
- no version in the tables: the first checked release that declares it;
- declared up to a release and missing from every later one: "removed" becomes the first release
  without it; said to be removed but still declared in the newest release: not removed;
- declared by no checked release although the tables say it is in one of them: the name is not
  emitted (the row keeps HIPIFY's name in its note, and HIP102 gives the reason).

Versions are ROCm release lines (major.minor), each Debian suite's being its HIP's: a target release
is the platform of a suite, whatever library versions it packages (sid: HIP 6.4, hipBLASLt 7.1).
Every corrected row says so in its note, naming the header and the Debian package version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FACTS = Path(__file__).resolve().parents[1] / "data" / "rocm-headers.json"
PROBE_FACTS = Path(__file__).resolve().parents[1] / "data" / "rocm-probes.json"
PROBE_NOTE = "compile probe"

# The Debian -dev package of each library's target, by profile (None: no package to check).
HIP_RUNTIME = "libamdhip64-dev"
PACKAGES = {
    "hip": {"runtime": HIP_RUNTIME, "driver": HIP_RUNTIME, "device": HIP_RUNTIME, "complex": HIP_RUNTIME,
            "rtc": HIP_RUNTIME, "cublas": "libhipblas-dev", "cublaslt": "libhipblaslt-dev",
            "curand": "libhiprand-dev", "cufft": "libhipfft-dev", "cusparse": "libhipsparse-dev",
            "cusolver": "libhipsolver-dev", "cub": "libhipcub-dev"},
    "roc": {"cublas": "librocblas-dev", "curand": "librocrand-dev", "cusparse": "librocsparse-dev",
            "cusolver": "librocsolver-dev", "cudnn": "libmiopen-dev"},
}
LABELS = {"libamdhip64-dev": "HIP", "libhipblas-dev": "hipBLAS", "libhipblaslt-dev": "hipBLASLt",
          "libhiprand-dev": "hipRAND", "libhipfft-dev": "hipFFT", "libhipsparse-dev": "hipSPARSE",
          "libhipsolver-dev": "hipSOLVER", "libhipcub-dev": "hipCUB", "librocblas-dev": "rocBLAS",
          "librocrand-dev": "rocRAND", "librocsparse-dev": "rocSPARSE", "librocsolver-dev": "rocSOLVER",
          "libmiopen-dev": "MIOpen"}
# Row columns (tools/generate_rule_data.py COLUMNS)
COL = {"hip": (0, 8, 11), "roc": (13, 14, 15)}
NOTE = 17
AUDIT_NOTE = "header audit"
PROJECT_NOTE = "project mapping"  # (tools/generate_rule_data.py _mapped)


def vt(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def load_facts(path: Path = FACTS, probes: Path | None = PROBE_FACTS) -> dict:
    """The header facts, with the compile probes' under "probes" (tools/rocm_headers/probe_audit.py)."""
    facts = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if facts and probes is not None and probes.is_file():
        facts["probes"] = json.loads(probes.read_text(encoding="utf-8"))
    return facts


def lookup_name(target: str) -> str:
    """The identifier a header declares for a target (`ns::engine<false>` -> `engine`)."""
    return re.sub(r"<.*>$", "", target).rsplit("::", 1)[-1]


def rocm_version(debian_version: str) -> str:
    upstream = debian_version.split(":", 1)[-1].rsplit("-", 1)[0]
    m = re.match(r"(\d+)\.(\d+)", upstream)
    return f"{m.group(1)}.{m.group(2)}" if m else upstream


def by_compiler(facts: dict, name: str) -> bool:
    return any(e[0] == "compiler" for e in facts.get("names", {}).get(name) or ())


def opt_in_only(facts: dict, name: str, package: str) -> str:
    """"with -DNAME (file, Debian suite package version)" when only an opt-in switch declares it."""
    for e in facts.get("names", {}).get(name) or ():
        if " -D" in e[3] and e[1] == package:
            return f"with {e[3].split(' ', 1)[1]} ({e[2]}, Debian {e[0]} {e[1]} {facts['releases'][e[0]][e[1]]})"
    return ""


# Header-only packages whose headers a library's releases come with (hipBLAS >= 6.3 declares its
# enums in hipblas-common): their names count for the library's own version.
COMPANIONS = {"libhipblas-dev": ("libhipblas-common-dev",), "libhipblaslt-dev": ("libhipblas-common-dev",)}


def checked(facts: dict, name: str, package: str) -> list[tuple[str, bool, str]]:
    """(ROCm version, declared there by default, citation) for each checked release, oldest
    first. The releases are those of `package` (the target's library), or, when the name is
    another package's (hipBLAS writes HIP's `hipDataType`), of the package that declares it."""
    found = [e for e in facts.get("names", {}).get(name) or () if " -D" not in e[3] and e[0] != "compiler"]
    owner = package
    if found and not any(e[1] == package or e[1] in COMPANIONS.get(package, ()) for e in found):
        owner = found[0][1]
    out: dict[str, tuple[bool, str]] = {}
    for suite, pkgs in facts.get("releases", {}).items():
        if owner not in pkgs:
            continue
        # the suite's ROCm release (its HIP's): a target release is a suite's platform, whose
        # libraries are whatever versions the suite packages (sid: HIP 6.4 with hipBLASLt 7.1)
        version = rocm_version(pkgs.get(HIP_RUNTIME) or pkgs[owner])
        hits = [e for e in found if e[0] == suite]
        cite = f"{hits[0][2]}, Debian {suite} {hits[0][1]} {pkgs[hits[0][1]]}" if hits else \
            f"Debian {suite} {owner} {pkgs[owner]}"
        was = out.get(version)
        if was is None or (hits and not was[0]):
            out[version] = (bool(hits), cite)
    return sorted(((v, d, c) for v, (d, c) in out.items()), key=lambda x: vt(x[0]))


def correct(added: str, removed: str, releases: list[tuple[str, bool, str]]) -> tuple[str, str, str, bool]:
    """(added, removed, why, drop) from HIPIFY's added/removed and the checked releases."""
    decl = [r for r in releases if r[1]]
    absent = [r for r in releases if not r[1]]
    if not decl:
        newest = releases[-1][0]
        if added and vt(added) > vt(newest):
            return added, removed, "", False  # newer than every header checked: not verifiable here
        versions = ", ".join(r[0] for r in releases)
        return added, removed, f"declared by no header of {versions} ({releases[-1][2]})", True
    first, last = decl[0], decl[-1]
    new_added, why = added, []
    if not added or vt(added) > vt(first[0]) or any(vt(added) <= vt(r[0]) < vt(first[0]) for r in absent):
        new_added = first[0]
        said = f"HIPIFY: {added}" if added else "HIPIFY gives no version"
        if absent and vt(absent[0][0]) < vt(first[0]):
            why.append(f"added {new_added} ({said}): first declared in {first[0]} ({first[2]}), "
                       f"not in {absent[0][0]}")
        else:
            why.append(f"added {new_added} ({said}): declared in {first[0]} ({first[2]})"
                       + (", the oldest release checked" if first is releases[0] else ""))
    later = [r for r in absent if vt(r[0]) > vt(last[0])]
    new_removed = removed
    if later:
        if not removed or vt(removed) > vt(later[0][0]) or vt(removed) <= vt(last[0]):
            new_removed = later[0][0]
            why.append(f"removed {new_removed} ({'HIPIFY: ' + removed if removed else 'HIPIFY: not removed'}): "
                       f"declared in {last[0]} ({last[2]}), not in {later[0][0]} ({later[0][2]})")
    elif removed and vt(removed) <= vt(last[0]):
        new_removed = ""
        why.append(f"not removed (HIPIFY: removed {removed}): still declared in {last[0]} ({last[2]})")
    if new_added == added and new_removed == removed:
        return added, removed, "", False
    return new_added, new_removed, "; ".join(why), False


def apply(row: list, library: str, facts: dict) -> list:
    """The row with its versions corrected by the header facts, then by the compile probes (a new
    list; notes appended)."""
    if not facts:
        return row
    row = list(row)
    notes = [row[NOTE]] if row[NOTE] else []
    for profile, (t, a, r) in COL.items():
        package = PACKAGES[profile].get(library)
        target = row[t]
        if package is None or not target or is_plain_c(target) or (profile == "hip" and library == "cudnn"):
            continue
        if by_compiler(facts, lookup_name(target)):
            # the compiler or the C++ library declares it: no ROCm release to date it by. A project
            # mapping to it (`__trap` -> `__builtin_trap`) has no version from HIPIFY either: every
            # checked release has it, the oldest dates it
            if not row[a] and row[NOTE].startswith(PROJECT_NOTE):
                oldest = checked(facts, lookup_name(target), package)[:1]
                if oldest:
                    row[a] = oldest[0][0]
                    notes.append(f"{AUDIT_NOTE}, {profile}: `{target}` is the compiler's (clang), in every checked "
                                 f"release from {oldest[0][0]}")
            continue
        label = LABELS.get(package, package)
        releases = checked(facts, lookup_name(target), package)
        added, removed, why, drop = correct(row[a], row[r], releases) if releases else (row[a], row[r], "", False)
        opt_in = drop and opt_in_only(facts, lookup_name(target), package)
        if opt_in:  # declared, but only under a documented switch: written, and the note says so
            notes.append(f"{AUDIT_NOTE}, {profile}: {label} `{target}` is declared only {opt_in}")
        elif why and drop:
            row[t] = None
            notes.append(f"{AUDIT_NOTE}, {profile}: {label}'s `{target}` is {why}, so it is not written")
            continue
        elif why:
            row[a], row[r] = added, removed
            notes.append(f"{AUDIT_NOTE}, {profile}: {label} `{target}` {why}")
        probed = probe_correction(facts.get("probes") or {}, target, row[a], row[r])
        if probed is None:
            continue
        added, removed, why, drop = probed
        if drop:
            row[t] = None
            notes.append(f"{AUDIT_NOTE}, {profile}: {label}'s `{target}` {why}, so it is not written")
        else:
            row[a], row[r] = added, removed
            notes.append(f"{AUDIT_NOTE}, {profile}: {label} `{target}` {why}")
    row[NOTE] = "; ".join(notes)
    return row


def is_plain_c(target: str) -> bool:
    from cuda2hip.checks.api.rename import _PLAIN_C  # the rename rules never check these against a ROCm version

    return bool(_PLAIN_C.match(target))


def probe_correction(probes: dict, target: str, added: str, removed: str) -> tuple[str, str, str, bool] | None:
    """(added, removed, why, drop) where a compile probe fails at an audited release at which the
    row writes `target`; None where the probes agree. The probes only ever take releases away:
    where they compile a name the data dates later, the data stands (the 5.2 probes compile the
    libraries against newer library headers than ROCm 5.2's)."""
    results = probes.get("names", {}).get(target)
    if not results:
        return None
    written = [r for r in results if (not added or vt(added) <= vt(r)) and not (removed and vt(removed) <= vt(r))]
    failing = [r for r in written if results[r][1]]
    if not failing:
        return None
    passing = [r for r in written if not results[r][1]]

    def cite(r: str) -> str:
        return f"{r} ({probes['releases'][r]['compiler']}: {results[r][1]})"

    if not passing:
        return added, removed, (f"does not compile at ROCm {', '.join(failing)} ({PROBE_NOTE}: "
                                + "; ".join(cite(r) for r in failing) + ")"), True
    if all(vt(f) < vt(passing[0]) for f in failing):
        return passing[0], removed, (f"added {passing[0]} ({PROBE_NOTE}: compiles at {passing[0]}, "
                                     f"not at {cite(failing[-1])})"), False
    if all(vt(f) > vt(passing[-1]) for f in failing):
        return added, failing[0], (f"removed {failing[0]} ({PROBE_NOTE}: compiles at {passing[-1]}, "
                                   f"not at {cite(failing[0])})"), False
    return None  # fails between releases it compiles at: not a version range (problems.py reports it)
