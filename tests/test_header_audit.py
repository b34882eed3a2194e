"""The table audit (tools/audit_rule_data.py): what counts as declared, how the headers correct the
tables' versions, and that the committed data writes no name the committed facts do not back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from rocm_headers import corrections  # noqa: E402
from rocm_headers.corrections import correct  # noqa: E402

DATA = ROOT / "rules" / "api" / "data"


def rows(lib: str) -> dict:
    return json.loads((DATA / f"{lib}.json").read_text(encoding="utf-8"))["names"]


# (version, declared, citation) of three releases, as corrections.checked gives them
def releases(*declared: bool, versions=("5.2", "5.7", "6.4")):
    return [(v, d, f"x.h {v}") for v, d in zip(versions, declared)]


def test_header_older_than_the_table_wins():
    # HIPIFY: HIP_R_16F needs 5.7; HIP 5.2's hip/library_types.h declares it
    added, removed, why, drop = correct("5.7.0", "", releases(True, True, True))
    assert (added, removed, drop) == ("5.2", "", False) and "HIPIFY: 5.7.0" in why


def test_missing_from_a_release_the_table_says_has_it():
    added, _, why, drop = correct("5.0.0", "", releases(False, True, True))
    assert added == "5.7" and not drop and "not in 5.2" in why


def test_removed_where_the_newer_headers_lack_it():
    added, removed, why, _ = correct("4.0.0", "", releases(True, True, False))
    assert (added, removed) == ("4.0.0", "6.4") and "not in 6.4" in why


def test_not_removed_while_the_newest_declares_it():
    assert correct("4.0.0", "6.0.0", releases(True, True, True))[1] == ""


def test_declared_nowhere_is_dropped_unless_newer_than_every_header():
    assert correct("5.0.0", "", releases(False, False, False))[3] is True
    assert correct("", "", releases(False, False, False))[3] is True
    assert correct("7.0.0", "", releases(False, False, False)) == ("7.0.0", "", "", False)


def test_agreement_changes_nothing():
    assert correct("5.2.0", "", releases(True, True, True)) == ("5.2.0", "", "", False)


def test_release_of_the_declaring_package():
    """A hipBLAS row that writes HIP's hipDataType is dated by HIP's releases, not hipBLAS's."""
    facts = {"releases": {"bookworm": {"libamdhip64-dev": "5.2.3-8"},
                          "trixie": {"libamdhip64-dev": "5.7.1-6", "libhipblas-dev": "5.5.1-4"}},
             "names": {"hipDataType": [["bookworm", "libamdhip64-dev", "hip/library_types.h", "type"],
                                       ["trixie", "libamdhip64-dev", "hip/library_types.h", "type"]]}}
    got = corrections.checked(facts, "hipDataType", "libhipblas-dev")
    assert [(v, d) for v, d, _ in got] == [("5.2", True), ("5.7", True)]


# --- what the committed data says (regressions of the known disagreements) --------------------

def test_hip_r_16f_needs_hip_5_2_not_5_7():
    for lib in ("runtime", "cublas"):
        for cuda in ("CUDA_R_16F", "cudaDataType"):
            row = rows(lib).get(cuda)
            if row is not None and row[0]:
                assert row[8] == "5.2", (lib, cuda, row)
                assert "hip/library_types.h" in row[17] and "5.2.3-8" in row[17]


def test_bf16_maps_to_the_hip_bf16_family():
    device = rows("device")
    assert device["__nv_bfloat16"][0] == "__hip_bfloat16"
    assert device["__nv_bfloat162"][0] == "__hip_bfloat162"
    assert device["nv_bfloat162"][0] == "__hip_bfloat162"
    # cuda_bf16.h's typedef, which HIPIFY's table lacks (a project mapping adds the row)
    assert device["nv_bfloat16"][0] == "__hip_bfloat16" and device["nv_bfloat16"][8] == "5.7"
    assert device["__float2bfloat16"][0] == "__float2bfloat16"
    assert device["__bfloat162float"][0] == "__bfloat162float"
    # HIP 5.2 has no hip/hip_bf16.h: the family needs 5.7 (trixie's headers)
    assert device["__nv_bfloat16"][8] == "5.7" and "amd_hip_bf16.h" in device["__nv_bfloat16"][17]


def test_cublaslt_is_a_library_of_its_own():
    lt = rows("cublaslt")
    assert lt["cublasLtCreate"][0] == "hipblasLtCreate" and lt["cublasLtCreate"][2] == "cublaslt"
    assert "cublasLtCreate" not in rows("cublas")


def test_names_no_header_declares_are_not_written():
    row = rows("runtime")["cudaErrorLossyQuery"]
    assert row[0] is None and "declared by no header" in row[17]


def test_no_hand_added_name_without_a_header():
    for path in DATA.glob("*.json"):
        payload = json.loads(path.read_text(encoding="utf-8"))
        for cuda in payload["hand_added"]:
            assert "10.1" not in payload["names"][cuda][8], cuda


def test_audit_check_of_the_committed_facts():
    """The committed data writes no name the committed facts do not back, and the report in
    docs/api-coverage.md is current (no headers needed: the fetched-header half runs in .ci/run)."""
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "audit_rule_data.py"), "--check",
                           "--headers", str(ROOT / "no-such-dir")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "names checked" in proc.stdout


def test_audit_check_fails_on_a_name_no_header_declares(tmp_path, monkeypatch):
    from rocm_headers.problems import problems
    from rocm_headers.targets import Target

    facts = json.loads(corrections.FACTS.read_text(encoding="utf-8"))
    facts["names"]["hipNoSuchFunction"] = []
    bad = Target("hipNoSuchFunction", "runtime", "hip", "cudaNoSuchFunction", "5.0.0")
    found = problems(facts, [bad], [])
    assert any("hipNoSuchFunction" in p and "declares it" in p for p in found)
    # an include target that an older HIP lacks, without a requirement, fails too
    found = problems(facts, [Target("hip/hip_bf16.h", "include", "hip", "cuda_bf16.h")], [])
    assert any("must require a newer ROCm" in p for p in found)
    assert not problems(facts, [Target("hip/hip_bf16.h", "include", "hip", "cuda_bf16.h", "5.7")], [])


# --- what clang says a header declares -----------------------------------------------------------

def test_declared_means_declared_not_mentioned(tmp_path):
    pytest.importorskip("clang.cindex")
    from rocm_headers.declarations import LIBCLANG, package_declarations

    if not Path(LIBCLANG).is_file() or not Path("/usr/include/hip/hip_runtime.h").is_file():
        pytest.skip("needs Debian 12's libclang-15 and libamdhip64-dev (apt-get install hipcc libamdhip64-dev)")
    inc = tmp_path / "usr" / "include"
    (inc / "hip").mkdir(parents=True)
    for f in Path("/usr/include/hip").rglob("*"):
        if f.is_file():
            dest = inc / "hip" / f.relative_to("/usr/include/hip")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
    (inc / "mylib").mkdir()
    (inc / "mylib" / "mylib.h").write_text(
        "// mylibCommented(void) is only mentioned here\n"
        "#if 0\nint mylibDisabled(void);\n#endif\n"
        "#define MYLIB_MACRO 1\n"
        "typedef enum { MYLIB_ONE } mylibEnum_t;\n"
        "int mylibFunction(int);\n"
        "struct mylibStruct { int mylibMember; };\n"
        "typedef void (*mylibCallback_t)(void*);\n")
    files = ["usr/include/mylib/mylib.h"]
    names = package_declarations(inc, files).names
    assert {"MYLIB_MACRO", "MYLIB_ONE", "mylibEnum_t", "mylibFunction", "mylibStruct", "mylibCallback_t"} <= set(names)
    assert "mylibCommented" not in names and "mylibDisabled" not in names
    assert names["mylibMember"] == {"member": "mylib/mylib.h"}
