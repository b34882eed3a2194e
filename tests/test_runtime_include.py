"""HIP121 (the HIP runtime include, first): its list of headers that need the runtime ahead of them
checked with the real hipcc, the include-layout scanner it relies on, and project layouts across
files (fixtures/preproc/runtime_include has the compiled end-to-end cases)."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import AT_EVERY_RELEASE, ROOT, run_cli
from cuda2hip.lang.cxx.preprocessor.layout import scan

RULE = yaml.safe_load((ROOT / "rules" / "api" / "hip-runtime-include.yaml").read_text())
RUNTIME_FIRST = RULE["params"]["needs_runtime_first"]
HEADER_MAP = yaml.safe_load((ROOT / "rules" / "api" / "cuda-runtime-headers.yaml").read_text())["headers"]


def test_cuda_spellings_map_to_listed_hip_headers():
    hip = {h for h in RUNTIME_FIRST if h.startswith("hip/")}
    for name in RUNTIME_FIRST:
        if not name.startswith("hip/"):
            assert HEADER_MAP.get(name) in hip, f"{name}: HIP100 maps it to {HEADER_MAP.get(name)}"
    assert {HEADER_MAP[c] for c in RUNTIME_FIRST if not c.startswith("hip/")} == hip


@AT_EVERY_RELEASE
@pytest.mark.parametrize("header", sorted(h for h in RUNTIME_FIRST if h.startswith("hip/")))
def test_header_needs_the_runtime_first(header, tmp_path, hipcc):
    """At 5.2 each listed header fails alone (the reason for the list); at every release it
    compiles after the runtime."""
    alone = tmp_path / "alone.hip"
    alone.write_text(f"#include <{header}>\nint main() {{ return 0; }}\n")
    if hipcc.release == "5.2":
        assert hipcc(alone, "-std=c++17").returncode != 0, f"{header} compiles alone: drop it from the list"
    after = tmp_path / "after.hip"
    after.write_text(f"#include <hip/hip_runtime.h>\n#include <{header}>\nint main() {{ return 0; }}\n")
    proc = hipcc(after, "-std=c++17")
    assert proc.returncode == 0, proc.stderr


def test_layout_of_includes():
    data = (b"/* c */\n#ifndef G_H\n#define G_H\n#include <stdio.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
            b"#include <cuda_runtime.h>\nconst char* s = \"{ \"; // }\nvoid f(float*);\n#ifdef __cplusplus\n}\n#endif\n"
            b"#ifdef X\n#  include \"a.h\"  // x\n#endif\n/* #include <no.h> */\nextern \"C\" { int g(); }\n"
            b"#include <b.h>\n#endif\n")
    got = [(i.header, i.quoted, i.depth, data[i.anchor:i.anchor + 8], i.extern_c is not None) for i in scan(data).includes]
    assert got == [
        ("stdio.h", False, 0, b"#include", False),
        ("cuda_runtime.h", False, 0, b"#ifdef _", True),  # anchored at the #ifdef that opens the block
        ("a.h", True, 1, b"#ifdef X", False),
        ("b.h", False, 0, b"#include", False),
    ]


def test_layout_without_guard_counts_conditionals():
    data = b"#ifndef A\n#include <x.h>\n#endif\n#if defined(B)\n#elif C\n#include <y.h>\n#endif\n"
    assert [(i.header, i.depth) for i in scan(data).includes] == [("x.h", 1), ("y.h", 1)]


def test_layout_skips_strings_comments_and_raw_strings():
    data = b'auto s = R"x(\n#include <no.h>\n)x";\nchar c = \'"\';\n/*\n#include <no2.h>\n*/\n#include <yes.h>\n'
    assert [i.header for i in scan(data).includes] == ["yes.h"]


def _check(tree, *files) -> list[tuple[str, int, str]]:
    proc = run_cli("check", "--isolated", "--no-cache", "--select", "HIP121", "--format", "json", *files, cwd=tree)
    assert proc.returncode in (0, 1), proc.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(proc.stdout)["findings"]]


def test_runtime_through_nested_project_headers(tmp_path):
    """The runtime comes two project headers down: nothing to add while those come first."""
    (tmp_path / "base.cuh").write_text("#pragma once\n#include <cuda_runtime.h>\n")
    (tmp_path / "mid.cuh").write_text("#pragma once\n#include \"base.cuh\"\n__device__ inline int one() { return 1; }\n")
    (tmp_path / "ok.cu").write_text("#include \"mid.cuh\"\n#include <cooperative_groups.h>\n"
                                    "__global__ void k(int* x) { x[threadIdx.x] = one(); }\n")
    (tmp_path / "late.cu").write_text("#include <cooperative_groups.h>\n#include \"mid.cuh\"\n"
                                      "__global__ void k(int* x) { x[threadIdx.x] = one(); }\n")
    got = _check(tmp_path, "ok.cu", "late.cu")
    assert [(p, line) for p, line, _ in got] == [("late.cu", 1)]
    assert "gets from `mid.cuh`" in got[0][2]


def test_plain_header_before_the_runtime_stays(tmp_path):
    """A project header that needs nothing (and includes only standard headers) may come first."""
    (tmp_path / "sizes.h").write_text("#pragma once\n#include <cstddef>\nconstexpr std::size_t N = 64;\n")
    (tmp_path / "a.cu").write_text("#include \"sizes.h\"\n#include <cuda_runtime.h>\n"
                                   "__global__ void k(float* x) { x[threadIdx.x] = N; }\n")
    (tmp_path / "other.h").write_text("#pragma once\n#include <thirdparty.h>\n")
    (tmp_path / "b.cu").write_text("#include \"other.h\"\n#include <cuda_runtime.h>\n"
                                   "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n")
    got = _check(tmp_path, "a.cu", "b.cu")
    assert [(p, line) for p, line, _ in got] == [("b.cu", 2)]


@pytest.mark.parametrize("source", [
    "#include <cublas_v2.h>\n__global__ void k(cuComplex* x) { x[threadIdx.x] = make_cuComplex(1.f, 0.f); }\n",
    "#include <stdio.h>\n#include <cublas_v2.h>\n#include <cuda_runtime.h>\nvoid f(cuComplex* x) { cudaFree(x); }\n",
    "// lic\n#include <cuda_runtime.h>\n#include <cublas_v2.h>\nvoid f(cuComplex* x) { cudaFree(x); }\n",
])
def test_runtime_comes_before_the_complex_include(source, tmp_path):
    """HIP122 adds hip/hip_complex.h, HIP121 keeps hip/hip_runtime.h ahead of it and of the library
    header; a second fix changes nothing."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.cu").write_text(source)
    for out in ("out", "again"):
        src = tmp_path / ("in" if out == "out" else "out")
        proc = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", "5.2", "--output-dir", tmp_path / out, src)
        assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "out" / "a.cu").read_text()
    lines = [line for line in text.splitlines() if line.startswith("#include")]
    assert lines.index("#include <hip/hip_runtime.h>") < lines.index("#include <hip/hip_complex.h>") \
        < lines.index("#include <hipblas/hipblas.h>"), text
    assert (tmp_path / "again" / "a.cu").read_text() == text


def test_a_user_rule_names_pattern_keeps_python_re(tmp_path):
    """A rule's own `names_pattern` is compiled by `re` as written (lookahead, `\\s` and all), not
    handed to the RE2 scanners of the built-in patterns (which refused it)."""
    rule = yaml.safe_load((ROOT / "rules" / "api" / "hip-complex-include.yaml").read_text())
    rule.update(code="USR001", id="my-complex-include")
    rule.pop("tests", None)
    rule["tables"] = [str((ROOT / "rules" / "api" / t).resolve()) for t in rule["tables"]]
    rule["params"]["names_pattern"] = r"\b(?:make_)?(?:cu|hip)[A-Z]\w*(?=\s*\()"
    (tmp_path / "my_rules").mkdir()
    (tmp_path / "my_rules" / "my.yaml").write_text(yaml.safe_dump(rule))
    (tmp_path / "cuda2hip.toml").write_text('rule-dirs = ["my_rules"]\nselect = ["USR001"]\n')
    src = tmp_path / "a.cu"
    src.write_text("#include <cublas_v2.h>\nvoid f() { auto a = make_cuComplex (1.f, 0.f); }\n")
    r = run_cli("check", "--no-cache", "--format", "json", src, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert [f["code"] for f in json.loads(r.stdout)["findings"]] == ["USR001"]
