"""Issue 13: over real code (CUB and Thrust of the CUDA toolkit, the real-world corpus when it is
there), `fix` changes only what its applied fixes account for: every changed line lies on an
applied edit, every byte outside the edits is unchanged, and `fix` on its output changes
nothing. The property is in tests/fidelity.py.

By default each corpus is checked on a deterministic sample (at most SAMPLE files, evenly spread
over the files sorted by path); CUDA2HIP_FIDELITY=all checks every file; `python
tests/fidelity.py [DIR...]` checks whole directories and prints the figures.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hsettings
from hypothesis import strategies as st

from conftest import ROOT
from cuda2hip.engine.engine import Engine
from cuda2hip.findings import Applicability, Edit, Finding, Fix, Severity
from cuda2hip.fix.apply import Change
from cuda2hip.fix.loop import FixOutcome, Pass
from cuda2hip.lang.source import SourceText
from cuda2hip.settings import Settings
from fidelity import Report, check_file, check_outcome, corpus_roots, source_files

SAMPLE = None if os.environ.get("CUDA2HIP_FIDELITY") == "all" else 100
CORPORA = corpus_roots(ROOT)


def _finding(start: int, end: int, text: str) -> Finding:
    return Finding("HIP101", "r", Severity.WARNING, "x.cu", start, end, 1, 1, 1, 1, "m",
                   fix=Fix(Applicability.SAFE, (Edit(start, end, text),)))


def test_the_property_catches_silent_changes():
    original = b"int a = cudaSuccess;\nint b = 1;\n"
    fixed = _finding(8, 19, "hipSuccess")
    good = b"int a = hipSuccess;\nint b = 1;\n"
    change = Change(8, 19, 8, 18)
    outcome = FixOutcome(SourceText("x.cu", good), [], [fixed], history=[Pass(original, [fixed], [change])])
    assert check_outcome(original, good, outcome) == []
    # a byte changed on another line than the edit's
    assert check_outcome(original, good.replace(b"b = 1", b"b = 2"), outcome)
    # a change that no applied edit accounts for
    stray = FixOutcome(SourceText("x.cu", good), [], [fixed],
                       history=[Pass(original, [fixed], [change, Change(24, 25, 23, 24)])])
    assert check_outcome(original, good.replace(b"b = 1", b"b = 2"), stray)
    # a changed text without any applied fix (e.g. line breaks normalised on the way)
    assert check_outcome(original, original.replace(b"\n", b"\r\n"), FixOutcome(SourceText("x.cu", original), []))


@pytest.fixture(scope="module")
def engine_and_settings(tmp_path_factory):
    settings = Settings(root=tmp_path_factory.mktemp("root"), use_cache=False)
    return Engine(settings), settings


def _check_corpus(name: str, engine_and_settings) -> Report:
    if name not in CORPORA:
        where = {"real-world": "run bench/real_world.py to fetch it into .cache/real-world"}.get(
            name, "the CUDA toolkit here has no CUB/Thrust headers (CUDA_PATH/include or include/cccl)")
        pytest.skip(f"{name}: not present ({where})")
    engine, settings = engine_and_settings
    report = Report()
    files = source_files(CORPORA[name])
    if SAMPLE is not None and len(files) > SAMPLE:
        files = [files[i * len(files) // SAMPLE] for i in range(SAMPLE)]
    for path in files:
        check_file(path, engine, settings, report)
    return report


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cub", "thrust", "real-world"])
def test_fix_accounts_for_every_change_on_real_code(name, engine_and_settings):
    report = _check_corpus(name, engine_and_settings)
    assert report.problems == [], "\n".join(report.problems[:20])
    assert report.files >= 10 and report.changed >= 1 and report.fixes >= 1, report
    # Refusals are for files that are not C/C++ text at all, never for code.
    assert len(report.refused) <= report.files // 10, report.refused


def _perturb(data: bytes, how: str) -> bytes:
    if how == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "cp1252":  # a Windows-1252 comment, as editors on Windows write it
        return b"// Don\x92t edit: \x93generated\x94\n" + data
    if how == "cuda-calls":  # names the rules rewrite, in code, a string and a comment
        return data + b'\nstatic void f_() { cudaDeviceSynchronize(); puts("cudaMalloc"); } // cudaFree\n'
    return data


@hsettings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_perturbed_real_files_keep_the_property(data, engine_and_settings, tmp_path_factory):
    if "cub" not in CORPORA:
        pytest.skip("the CUDA toolkit here has no CUB headers")
    files = source_files(CORPORA["cub"])
    path = data.draw(st.sampled_from(files), label="file")
    hows = data.draw(st.lists(st.sampled_from(["crlf", "bom", "cp1252", "cuda-calls"]), max_size=3, unique=True))
    raw = path.read_bytes()
    for how in sorted(hows, key=["cuda-calls", "crlf", "cp1252", "bom"].index):
        if how == "bom" and "cp1252" in hows:
            continue  # a UTF-8 BOM on a file that is not UTF-8 is refused, by design
        raw = _perturb(raw, how)
    target = tmp_path_factory.mktemp("p") / path.name
    target.write_bytes(raw)
    engine, settings = engine_and_settings
    report = Report()
    check_file(target, engine, settings, report)
    assert report.problems == [] and not report.refused, (hows, report)
