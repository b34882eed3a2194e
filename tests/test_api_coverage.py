"""Issue 3, "Done when" 1: every row of HIPIFY's reference tables is accounted for (renamed,
kept under the same name, or flagged by HIP102 with a reason), proven twice: by `cuda2hip
coverage --tables` against HIPIFY's tables (fetched by tests/harness/fetch_hipify_tables.py), and
by linting every CUDA name of the generated data and checking that each one gets exactly one
finding (or is valid HIP as written)."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from conftest import FETCH_HIPIFY_TABLES, HIPIFY_TABLES, INSTALL_TEST_DEPS, ROOT, run_cli
from cuda2hip.api.tables import all_table_paths, load_table
from cuda2hip.checks.api.rename import resolve_for
from cuda2hip.engine.engine import Engine
from cuda2hip.engine.frontends.registry import frontend
from cuda2hip.lang.source import SourceText
from cuda2hip.settings import Settings

TABLES = HIPIFY_TABLES


def _tables_skip_reason() -> str | None:
    """Why the row-by-row tests cannot compare the data with the tables here, or None."""
    if not TABLES.is_dir():
        return (f"HIPIFY's tables not found in {TABLES} (fetch them: {FETCH_HIPIFY_TABLES}; "
                f"every test tool at once: {INSTALL_TEST_DEPS})")
    sys.path.insert(0, str(ROOT / "tools"))
    from generate_rule_data import data_release, tables_release

    data, tables = data_release(), tables_release(TABLES)
    if tables and data != tables:
        return (f"rules/api/data was generated from the tables of HIPIFY {data}, {TABLES} holds {tables}'s: "
                "the data is to be regenerated (python tools/generate_rule_data.py) before they compare")
    return None


needs_tables = pytest.mark.skipif(_tables_skip_reason() is not None, reason=_tables_skip_reason() or "")

PROFILES = [
    pytest.param({}, id="hip-default"),
    pytest.param({"library_profile": "roc"}, id="roc-default"),
    pytest.param({"target_rocm": "6.4"}, id="hip-6.4"),
    pytest.param({"target_rocm": "5.2"}, id="hip-5.2"),
    pytest.param({"library_profile": "roc", "target_rocm": "5.2", "experimental": True}, id="roc-5.2-experimental"),
]


@needs_tables
def test_generated_data_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_rule_data.py"), "--check",
                           "--tables", str(TABLES)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@needs_tables
@pytest.mark.parametrize("args", [[], ["--roc"], ["--target-rocm", "5.2"], ["--roc", "--target-rocm", "6.4", "--experimental"]])
def test_coverage_command_accounts_for_every_reference_row(args, tmp_path):
    proc = run_cli("coverage", "--isolated", "--tables", TABLES, "--format", "json", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    libs = {r["library"] for r in result}
    assert {"runtime", "driver", "device", "rtc", "complex", "cublas", "curand", "cufft", "cusparse",
            "cusolver", "cudnn", "cub"} <= libs
    for r in result:
        assert r["complete"], r
        assert r["renamed"] + r["same-name"] + r["flagged"] == r["names"]
    # 22 tables: the HIP tables plus the *_and_ROC/MIOPEN and *_by_ROC/MIOPEN ones.
    assert sum(r["source_rows"] for r in result) == sum(r["source_rows_accounted"] for r in result) > 17000


def test_coverage_fails_when_a_table_has_no_rule(tmp_path):
    proc = run_cli("coverage", "--isolated", "--ignore", "HIP107", cwd=tmp_path)
    assert proc.returncode == 1
    assert "problem (cublas): no selected rename rule" in proc.stdout


@pytest.mark.parametrize("changes", PROFILES)
def test_every_table_name_gets_one_finding_or_is_valid_hip(changes):
    settings = msgspec.structs.replace(Settings(use_cache=False), **changes)
    engine = Engine(settings)
    rules = engine.ruleset_for("all_names.cu", "cuda")
    fe = frontend("cuda")
    for path in all_table_paths():
        entries = list(load_table(path).values())
        # One call per line: plain names such as `umax` count only where they are called.
        text = "".join(f"{e.cuda}();\n" for e in entries)
        result = fe.lint(SourceText.from_bytes(text.encode(), "all_names.cu"), rules, settings)
        # rules whose finding replaces HIP102's (HIP403 for the `_sync` warp functions)
        over_102 = {code for code, codes in rules.supersedes.items() if "HIP102" in codes}
        by_line: dict[int, list] = {}
        for f in result.findings:
            # (HIP121/HIP122: whole-file includes; HIP13x: the HIP form of a call or field, not its name)
            if (f.code.startswith("HIP1") and f.code not in ("HIP121", "HIP122") and not f.code.startswith("HIP13")
                    or f.code in over_102):
                by_line.setdefault(f.line, []).append(f)
        for i, entry in enumerate(entries, start=1):
            got = by_line.get(i, [])
            res = resolve_for(entry, settings)
            if res.target == entry.cuda:
                assert not got, (entry.cuda, [f.message for f in got])
                continue
            assert len(got) == 1, (path, entry.cuda, [f"{f.code} {f.message}" for f in got])
            f = got[0]
            if res.target is None:
                assert (f.code == "HIP102" and res.reason in f.message) or f.code in over_102, (entry.cuda, f.message)
            else:
                assert f.fix is not None and f.fix.edits[0].text == res.target, (entry.cuda, f.message)


def test_cudnn_rows_come_from_the_miopen_table_when_hipify_has_no_hipdnn_one(tmp_path):
    """HIPIFY rocm-7.0 dropped its hipDNN tables: the cuDNN names then come from the MIOpen table
    alone, with no HIP target and the MIOpen name as the roc one."""
    from cuda2hip.api.hipify_tables import ROC_ONLY, library_rows, source_files

    (tmp_path / ROC_ONLY["cudnn"]).write_text(
        "## **1. CUDNN Data types**\n\n"
        "|**CUDA**|**A**|**D**|**C**|**R**|**MIOPEN**|**A**|**D**|**C**|**R**|**E**|\n"
        "|:--|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|\n"
        "|`cudnnHandle_t`|2.0.0| | | |`miopenHandle_t`|2.0.0| | | | |\n"
        "|`cudnnCTCLoss`|7.0.0| | | |`miopenCTCLoss`|2.1.0| | | |1|\n"
        "|`cudnnFusedOpsPlan_t`|7.6.0| | | | | | | | | |\n", encoding="utf-8")
    assert source_files("cudnn", tmp_path) == [(ROC_ONLY["cudnn"], "roc")]
    rows, roc, files = library_rows("cudnn", tmp_path)
    assert files == [ROC_ONLY["cudnn"]]
    assert [(r["cuda"], r["target"], r["target_added"], r["cuda_added"]) for r in rows] == [
        ("cudnnHandle_t", None, "", "2.0.0"), ("cudnnCTCLoss", None, "", "7.0.0"), ("cudnnFusedOpsPlan_t", None, "", "7.6.0")]
    assert roc["cudnnHandle_t"]["second"] == "miopenHandle_t" and roc["cudnnHandle_t"]["second_added"] == "2.0.0"
    assert roc["cudnnCTCLoss"]["second_experimental"] == "1" and roc["cudnnFusedOpsPlan_t"]["second"] is None
    # With the hipDNN table there (HIPIFY before rocm-7.0), it and the HIP + MIOpen one are read.
    assert [kind for _, kind in source_files("cublas", tmp_path)] == ["hip", "roc", "roc"]
