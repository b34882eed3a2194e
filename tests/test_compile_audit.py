"""The compile audit (tools/audit_rule_data.py --probe; tools/rocm_headers/probe_*.py): how a
failing probe is found in a batch, how the results correct the tables, that the committed tables
write no name whose probe failed at that release, and (with the HIP 7.2 toolchain) that every name
the tables write for 7.2 compiles against 7.2's headers."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "harness"))
import audit_rule_data  # noqa: E402
import hip_toolchains  # noqa: E402
from rocm_headers import compilers, probe_audit, probe_report, probes  # noqa: E402
from rocm_headers.corrections import apply, load_facts, probe_correction  # noqa: E402
from rocm_headers.probe_run import Runner, parse_diagnostics  # noqa: E402
from rocm_headers.targets import fix_targets, include_targets, inline_targets  # noqa: E402

from cuda2hip import rocm_releases  # noqa: E402

FACTS = {"releases": {r: {"compiler": f"clang for {r}"} for r in ("5.2", "6.4", "7.2")}}


def _probed(**by_release: str) -> dict:
    """Probe facts of `hipX`: release ("7_2") -> its error ("" compiles)."""
    return {**FACTS, "names": {"hipX": {r.replace("_", "."): ["name", e] for r, e in by_release.items()}}}


def test_a_probe_failing_at_the_newest_release_removes_the_name_there():
    got = probe_correction(_probed(**{"5_2": "", "6_4": "", "7_2": "no member named 'hipX'"}), "hipX", "5.0", "")
    added, removed, why, drop = got
    assert (added, removed, drop) == ("5.0", "7.2", False)
    assert "compiles at 6.4, not at 7.2 (clang for 7.2: no member named 'hipX')" in why


def test_a_probe_failing_at_the_oldest_releases_raises_added():
    facts = {**FACTS, "names": {"hipX": {"5.2": ["call", "no matching function"], "6.4": ["call", ""],
                                         "7.2": ["call", ""]}}}
    added, removed, why, drop = probe_correction(facts, "hipX", "1.6.0", "")
    assert (added, removed, drop) == ("6.4", "", False) and "not at 5.2" in why


def test_failing_everywhere_the_data_writes_it_drops_the_name():
    facts = {**FACTS, "names": {"hipX": {r: ["type", "unknown type name"] for r in ("5.2", "6.4", "7.2")}}}
    assert probe_correction(facts, "hipX", "5.0", "")[3] is True
    # only the releases the row writes it at count: removed in 6.4 already, 5.2 compiles
    facts["names"]["hipX"]["5.2"] = ["type", ""]
    assert probe_correction(facts, "hipX", "5.0", "6.4") is None


def test_probes_never_add_releases():
    """A 5.2 probe compiles the libraries against newer headers than ROCm 5.2's: where it compiles a
    name the data dates later, the data stands."""
    facts = {**FACTS, "names": {"hipX": {r: ["name", ""] for r in ("5.2", "6.4", "7.2")}}}
    assert probe_correction(facts, "hipX", "6.0", "") is None


def test_the_correction_reaches_the_row_and_hip102():
    from cuda2hip.api.tables import ApiEntry
    from cuda2hip.checks.api.rename import resolve

    facts = {"releases": {}, "names": {},
             "probes": {**FACTS, "names": {"hipblasX_v2": {"6.4": ["name", ""], "7.2": ["name", "no member named"]}}}}
    row = ["hipblasX_v2", "function", "cublas", "", "", "", "", "", "6.0.0", "", "", "", False, None, "", "", False, ""]
    fixed = apply(row, "cublas", facts)
    assert fixed[11] == "7.2" and "compile probe" in fixed[17]
    entry = ApiEntry("cublasX", *fixed)
    assert resolve(entry, "hip", (7, 2), "7.2", False).reason == "hipBLAS's `hipblasX_v2` was removed in ROCm 7.2"
    assert resolve(entry, "hip", (6, 4), "6.4", False).target == "hipblasX_v2"


def test_errors_are_attributed_to_their_probe_line():
    path = "/tmp/x/probe.hip"
    text = "\n".join([
        f"{path}:12:20: error: no member named 'hipNope' in the global namespace",
        "In file included from /tmp/x/probe.hip:3:",
        "/usr/include/hipblas/hipblas.h:40:1: error: unknown type name 'foo'",
        "/usr/include/hip/x.h:7:3: error: no matching function for call to 'g'",
        f"{path}:15:9: note: in instantiation of function template specialization requested here",
        "/usr/include/hip/y.h:1:1: error: something nobody asked for",
    ])
    groups = parse_diagnostics(text, path)
    assert [g["lines"][:1] for g in groups] == [[12], [3], [15], []]


@pytest.fixture(scope="module")
def compiler_52():
    found = compilers.find("5.2")
    if found is None:
        pytest.skip(hip_toolchains.why_missing("5.2") or "no HIP 5.2 compiler")
    return found


def test_a_batch_names_each_failing_probe(compiler_52):
    batch = [
        probes.make(probes.Wanted("hipMalloc", "HIP", "function"), {}),
        probes.make(probes.Wanted("hipNoSuchFunction", "HIP", ""), {}),
        probes.make(probes.Wanted("hipStream_t", "HIP", "type"), {}),
        probes.make(probes.Wanted("hipSuccess", "HIP", "enumerator"), {}),
        probes.make(probes.Wanted("HIP_SYMBOL", "HIP", "macro"), {}),
        probes.make(probes.Wanted("HIP_NO_SUCH_MACRO", "HIP", "macro"), {}),
        probes.make(probes.Wanted("hipLaunchKernelGGL", "HIP", ""), {}),  # a macro, kind unknown
        # a call with the wrong argument types fails although the name exists
        probes.Probe("hipFree", "HIP", "call", "using t = decltype(::hipFree(std::declval<const char*>(), 1));",
                     probes.name_code("hipFree")),
        # a type probe of a function: the name alone is what passes
        probes.make(probes.Wanted("hipDeviceSynchronize", "HIP", "type"), {}),
    ] + probes.include_probes(["hip/hip_complex.h", "hip/no_such_header.h"])
    got = Runner(compiler_52).run(batch)
    failing = {k for k, o in got.items() if o.error}
    assert failing == {"hipNoSuchFunction", "HIP_NO_SUCH_MACRO", "hip/no_such_header.h"}, got
    assert got["hipDeviceSynchronize"].form == "name"
    assert got["hipFree"].form == "name"  # the call failed, the name compiles: recorded as such


def test_the_committed_tables_write_no_name_whose_probe_failed():
    """At every audited release, each name the tables write has a probe that compiled there (the
    committed facts of tools/data/rocm-probes.json; no compiler needed)."""
    facts = load_facts()
    assert set(facts["probes"]["releases"]) == set(rocm_releases.AUDITED)
    assert set(probe_audit.SUITES) == set(rocm_releases.AUDITED)
    problems = audit_rule_data.probe_problems(facts["probes"], audit_rule_data.committed_tables(), docs=False)
    assert problems == []


def test_the_audit_probes_every_name_the_rewriter_writes_at_any_release():
    """The audit's list of names (header facts, probes, call probes) is what the rewriter writes at
    each release, later releases' names included (hipBLAS 3's `hipblasCaxpy` for 6.x's
    `hipblasCaxpy_v2` at 7.x, rules/api/data/releases/successors.json)."""
    tables = audit_rule_data.committed_tables()
    listed = set(probes.table_names(tables))
    for release in rocm_releases.AUDITED:
        written = {name for (_lib, name) in probe_report.written(tables, release)}
        assert written <= listed, (release, sorted(written - listed)[:10])
    assert {"hipblasCaxpy", "hipblasCaxpy_v2"} <= listed


def test_the_audit_page_is_current():
    facts = load_facts()
    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    assert probe_report.section(facts["probes"]) in text
    for release in rocm_releases.AUDITED:
        assert release in facts["probes"]["figures"]


def test_forms_data_covers_every_target_release():
    for name in ("calls", "device-functions", "struct-fields"):
        data = json.loads((ROOT / "rules" / "api" / "data" / "forms" / f"{name}.json").read_text())
        assert set(rocm_releases.AUDITED) <= set(data["releases"]), name


@pytest.mark.slow
def test_every_name_the_tables_write_for_7_2_compiles_with_7_2():
    """Compile a probe of every name the committed tables (and the rules' own names) write at ROCm
    7.2 with the HIP 7.2 toolchain: a name 7.2's headers lack, or a call they reject, fails here."""
    compiler = compilers.find("7.2")
    if compiler is None:
        pytest.skip(compilers.how_to_get("7.2"))
    tables = audit_rule_data.committed_tables()
    facts = {k: v for k, v in load_facts().items() if k != "probes"}
    written = {name for (_lib, name) in probe_report.written(tables, "7.2")}
    extra = probe_report.extra_labels(inline_targets(), fix_targets(), include_targets(), tables)
    written |= {name for name, _ in probe_report.extra_written(extra, "7.2")}
    items, headers = probe_audit.wanted(tables, inline_targets(), fix_targets(), facts, "7.2")
    try:
        from rocm_headers import probe_calls

        decls, macros = probe_calls.cuda_declarations()
    except Exception:  # no CUDA headers: the functions are probed by name
        decls, macros = {}, {}
    calls = probe_audit.call_probes(tables, "7.2", decls, macros) if decls else {}
    batch = [probes.make(w, calls) for w in items if w.name in written]
    batch += probes.include_probes(sorted(h for h in written if "/" in h))
    got = Runner(compiler).run(batch, headers)
    failing = sorted(f"{k}: {o.error}" for k, o in got.items() if o.error)
    assert len(got) >= 4000 and failing == []
