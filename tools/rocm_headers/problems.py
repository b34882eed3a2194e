"""What the audit fails on: a name the rules write that no checked header declares (or declares in
other versions than the data says), a header of the include maps no release installs, a library,
CMake target or package name no release provides."""

from __future__ import annotations

from .corrections import LABELS, by_compiler, checked, correct, lookup_name, opt_in_only, rocm_version, vt


def verdict(facts: dict, t) -> tuple[str, str]:
    """("ok" | "unverifiable" | "problem", why) for one table or inline target."""
    name = lookup_name(t.name)
    entries = facts.get("names", {}).get(name)
    where = f"`{t.name}` (for `{t.cuda}`, {t.library} {t.profile})"
    if entries is None:
        return "problem", f"{where} is not in the header facts: run tools/audit_rule_data.py --write"
    if by_compiler(facts, name):
        return "ok", "declared by the compiler or the C++ library"
    releases = checked(facts, name, t.package) if t.package else []
    if not releases:
        if t.hand_added and not entries:
            return "problem", f"{where} was added by hand and no fetched header declares it"
        return ("ok" if entries else "unverifiable"), "no Debian package of its library"
    label = LABELS.get(t.package, t.package)
    if t.replaces:
        # a later release's name for `t.replaces`: it must be declared from the release that
        # writes it; before, it may be declared with another signature (hipBLAS 2's plain names
        # took hipblasComplex), which only the compile probes can tell
        later = [r for r in releases if vt(r[0]) >= vt(t.added)]
        if not later:
            return "unverifiable", f"written from {label} {t.added}, newer than the newest checked"
        lacking = [r[0] for r in later if not r[1]]
        if lacking:
            return "problem", (f"{where}: written from ROCm {t.added} in place of `{t.replaces}`, but no header of "
                               f"{label} " + ", ".join(lacking) + " declares it")
        return "ok", ""
    if not any(r[1] for r in releases):
        newest = releases[-1][0]
        if opt_in_only(facts, name, t.package) or (entries and t.hand_added):
            return "opt-in", "declared only with an opt-in switch"
        if t.added and vt(t.added) > vt(newest) and not t.hand_added:
            return "unverifiable", f"needs {label} {t.added}, newer than the newest checked ({newest})"
        return "problem", (f"{where}: no header of {label} " + ", ".join(r[0] for r in releases)
                           + " declares it")
    _added, _removed, why, _drop = correct(t.added, t.removed, releases)
    if why:
        return "problem", f"{where}: the data's versions disagree with the headers ({why}): regenerate the data"
    return "ok", ""


def include_problems(facts: dict, t) -> list[str]:
    """A header of the include maps: installed by some release, and by every checked release from
    the version the rule `requires` on (or from the oldest, without one)."""
    rows = facts.get("headers", {}).get(t.name)
    where = f"include map: `{t.name}` (for `{t.cuda}`, {t.profile})"
    if not rows:
        return [f"{where} is installed by no fetched release"]
    package = rows[0][1]
    have = {r[0] for r in rows}
    out = []
    for suite, pkgs in facts["releases"].items():
        if package in pkgs and suite not in have:
            version = rocm_version(pkgs[package])
            if not t.added or vt(t.added) <= vt(version):
                out.append(f"{where}: {package} {pkgs[package]} (Debian {suite}) does not install it; the rule "
                           f"must require a newer ROCm (`params.requires`, now {t.added or 'none'})")
    return out


def problems(facts: dict, targets, build) -> list[str]:
    out = []
    for t in targets:
        if t.library == "include":
            out += include_problems(facts, t)
            continue
        kind, why = verdict(facts, t)
        if kind == "problem":
            out.append(why)
    for what, name, cuda in build:
        key = {"lib": "libraries", "target": "cmake_targets", "package": "cmake_packages"}[what]
        if not facts.get(key, {}).get(name):
            out.append(f"build rules: {what} `{name}` (for `{cuda}`) is provided by no fetched release")
    return sorted(set(out))
