"""The compile audit: every name the rules can write, probed at every audited release
(cuda2hip/rocm_releases.py AUDITED) with that release's compiler, and the results kept in
tools/data/rocm-probes.json (read by corrections.py: a name whose probe fails at a release is not
written there).

Every name is probed at every release, whether or not the data writes it there: the facts then
say where each name compiles, independently of the versions they correct (a correction never
hides the evidence that made it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from cuda2hip import rocm_releases
from cuda2hip.api.tables import ApiEntry
from cuda2hip.checks.api.rename import resolve

from . import probe_calls, probes
from .compilers import Compiler
from .corrections import COL, PACKAGES
from .probe_run import Runner
from .targets import table_targets

PROBES = Path(__file__).resolve().parents[1] / "data" / "rocm-probes.json"
# The Debian suite whose headers the header facts hold for each audited release.
SUITES = {"5.2": "bookworm", "6.4": "sid", "7.2": "experimental"}


def load(path: Path = PROBES) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _rename_at(tables: dict[str, dict], profile: str, release: str):
    """CUDA name -> what the (uncorrected-by-probes) tables write for it at `release`, or None."""
    target = rocm_releases.version_tuple(release)
    rows = {cuda: (lib, row) for lib, payload in tables.items() for cuda, row in payload["names"].items()}
    cache: dict[str, str | None] = {}

    def rename(name: str) -> str | None:
        if name not in cache:
            got = rows.get(name)
            cache[name] = None if got is None else resolve(ApiEntry(name, *got[1]), profile, target, release,
                                                           True).target
        return cache[name]

    return rename


def wanted(tables: dict[str, dict], inline, fixed, facts: dict, release: str):
    """(the probes of `release`, group -> headers the facts cite for its names)."""
    suite = SUITES[release]
    packages = probes.table_names(tables)
    for t in inline:
        packages.setdefault(t.name, PACKAGES["hip"].get(t.library) or "libamdhip64-dev")
    for t in fixed:
        packages.setdefault(t.name, probes.declaring_package(facts, t.name) or "libamdhip64-dev")
    extra: dict[str, set[str]] = {}
    items = []
    for name, package in sorted(packages.items()):
        w = probes.Wanted(name, probes.group_of(package, name), probes.kind_at(facts, name, suite))
        items.append(w)
        h = probes.cited_header(facts, name, suite)
        if h:
            extra.setdefault(w.group, set()).add(h)
    return items, {g: sorted(v) for g, v in extra.items()}


def call_probes(tables: dict[str, dict], release: str, decls, macros) -> dict[str, str]:
    """name -> call probe, for the functions the tables write (a later release's name for a
    target is called as the target is: it took over its signature)."""
    out: dict[str, str] = {}
    for profile in COL:
        want, library_of, same_as = {}, {}, {}
        for t in table_targets(tables):
            if t.profile == profile and t.kind == "function":
                want.setdefault(t.name, t.cuda)
                library_of[t.cuda] = t.library
                if t.replaces:
                    same_as[t.name] = t.replaces
        out.update(probe_calls.calls(profile, want, decls, macros, library_of, _rename_at(tables, profile, release),
                                     same_as))
    return out


def run_release(release: str, compiler: Compiler, tables, inline, fixed, includes, facts, decls, macros, log,
                jobs: int = 2) -> dict:
    start = time.monotonic()
    items, extra = wanted(tables, inline, fixed, facts, release)
    calls = call_probes(tables, release, decls, macros) if decls else {}
    batch = [probes.make(w, calls) for w in items] + probes.include_probes(includes)
    runner = Runner(compiler, jobs=jobs, log=log)
    log(f"ROCm {release}: {len(batch)} probes ({len(calls)} calls) with {' '.join(compiler.command)}")
    results = runner.run(batch, extra)
    seconds = round(time.monotonic() - start)
    log(f"ROCm {release}: {sum(1 for o in results.values() if o.error)} fail; {runner.units} units, {seconds} s")
    return {
        "compiler": compiler.label, "units": runner.units,
        "broken_headers": runner.broken_headers,
        "results": {k: [o.form, o.error] for k, o in results.items()},
    }


def merge(old: dict, fresh: dict[str, dict], source: str) -> dict:
    """The facts with the releases of `fresh` replaced (the others kept as committed)."""
    releases = {**old.get("releases", {})}
    names = {k: dict(v) for k, v in old.get("names", {}).items()}
    for release, got in fresh.items():
        releases[release] = {k: got[k] for k in ("compiler", "units", "broken_headers")}
        for name in names:
            names[name].pop(release, None)
        for name, verdict in got["results"].items():
            names.setdefault(name, {})[release] = verdict
    order = [r for r in rocm_releases.AUDITED if r in releases]
    return {"source": source, "releases": {r: releases[r] for r in order},
            "names": {n: {r: v[r] for r in order if r in v} for n, v in sorted(names.items())}}


def render(facts: dict) -> str:
    lines = ["{", f'  "source": {json.dumps(facts["source"])},', '  "releases": {']
    rel = list(facts["releases"].items())
    for i, (r, v) in enumerate(rel):
        lines.append(f"    {json.dumps(r)}: {json.dumps(v, sort_keys=True)}" + ("," if i < len(rel) - 1 else ""))
    lines += ["  },", '  "names": {']
    names = list(facts["names"].items())
    for i, (n, v) in enumerate(names):
        lines.append(f"    {json.dumps(n)}: {json.dumps(v)}" + ("," if i < len(names) - 1 else ""))
    lines.append("  }" + ("," if "figures" in facts else ""))
    if "figures" in facts:
        lines.append(f'  "figures": {json.dumps(facts["figures"], sort_keys=True)}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def verdict(probe_facts: dict, name: str, release: str) -> tuple[bool, str] | None:
    """(compiles, error) of `name`'s probe at `release`, None where it was not probed."""
    got = probe_facts.get("names", {}).get(name, {}).get(release)
    if got is None:
        return None
    return not got[1], got[1]
