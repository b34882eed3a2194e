"""CMake and Makefile frontends: discovery by file name, suppressions, parse recovery, the
--offload-arch option and user-extended flag tables."""

from __future__ import annotations

import json

from conftest import run_cli

from cuda2hip.project.discover import discover
from cuda2hip.settings import Settings


def test_build_files_are_discovered_by_name(tmp_path):
    for name in ("CMakeLists.txt", "cmake/Deps.cmake", "Makefile", "sub/makefile", "GNUmakefile",
                 "rules.mk", "notes.txt", "Makefile.bak"):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n")
    files, errors = discover([str(tmp_path)], Settings(root=tmp_path))
    got = {f.path.relative_to(tmp_path).as_posix() if f.path.is_absolute() else f.path.name: f.language
           for f in files}
    langs = sorted((k.rsplit("/", 1)[-1], v) for k, v in got.items())
    assert langs == [("CMakeLists.txt", "cmake"), ("Deps.cmake", "cmake"), ("GNUmakefile", "make"),
                     ("Makefile", "make"), ("makefile", "make"), ("rules.mk", "make")]
    assert not errors


def _check(path, *args):
    res = run_cli("check", "--isolated", "--format", "json", *args, path)
    return res, json.loads(res.stdout) if res.stdout.strip().startswith(("{", "[")) else None


def _codes(report):
    items = report["findings"] if isinstance(report, dict) else report
    return sorted((f["code"], f["line"], f["suppressed"]) for f in items)


def test_cmake_suppression_and_unused_suppression(tmp_path):
    f = tmp_path / "CMakeLists.txt"
    f.write_text("project(a LANGUAGES CUDA) # cuda2hip: ignore[HIP701]\n"
                 "# cuda2hip: ignore[HIP708]\n"
                 "enable_language(CUDA)\n")
    res = run_cli("check", "--isolated", "--format", "concise", "--show-suppressed", f)
    lines = res.stdout.splitlines()
    assert any(":1:" in line and "HIP701" in line for line in lines)  # shown as suppressed
    assert any(":2:" in line and "HIP001" in line for line in lines)  # HIP708 suppresses nothing
    assert any(":3:" in line and "HIP701" in line for line in lines)
    fixed = run_cli("fix", "--isolated", f)
    assert fixed.returncode == 0 and "1 suppressed" in fixed.stdout
    assert f.read_text() == "project(a LANGUAGES CUDA) # cuda2hip: ignore[HIP701]\nenable_language(HIP)\n"


def test_makefile_suppression(tmp_path):
    f = tmp_path / "Makefile"
    f.write_text("# cuda2hip: ignore[HIP751]\nNVCC = nvcc\nLDLIBS = -lcudart\n")
    res = run_cli("fix", "--isolated", f)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f.read_text() == "# cuda2hip: ignore[HIP751]\nNVCC = nvcc\nLDLIBS = -lamdhip64\n"


def test_cmake_parse_recovery_is_reported(tmp_path):
    f = tmp_path / "CMakeLists.txt"
    f.write_text("project(a LANGUAGES CUDA\nenable_language(CUDA)\n")
    res = run_cli("check", "--isolated", "--format", "concise", "--show-info", f)
    assert "HIP002" in res.stdout


def test_offload_arch_option_is_validated(tmp_path):
    f = tmp_path / "CMakeLists.txt"
    f.write_text("set(CMAKE_CUDA_ARCHITECTURES 80)\n")
    bad = run_cli("fix", "--isolated", "--offload-arch", "sm_80", f)
    assert bad.returncode == 2 and "not an AMD GPU target" in bad.stderr
    ok = run_cli("fix", "--isolated", "--offload-arch", "gfx90a:xnack+,gfx942", f)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f.read_text() == 'set(CMAKE_HIP_ARCHITECTURES "gfx90a:xnack+;gfx942")\n'


def test_offload_arch_and_extra_flags_from_configuration(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text(
        '[build]\noffload-arch = ["gfx942"]\n\n'
        '[[rule-options.HIP752.extra-flags]]\nnames = ["--my-nvcc-flag"]\nreplace = "-fmy-clang-flag"\n')
    mk = tmp_path / "Makefile"
    mk.write_text("NVCCFLAGS = -arch=sm_90 --my-nvcc-flag\n")
    res = run_cli("fix", "Makefile", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert mk.read_text() == "NVCCFLAGS = --offload-arch=gfx942 -fmy-clang-flag\n"


def test_rules_listing_has_the_build_rules():
    res = run_cli("rules", "--format", "json")
    rules = {r["code"]: r for r in json.loads(res.stdout)}
    build = {c: r["language"] for c, r in rules.items() if c.startswith("HIP7")}
    assert set(build.values()) == {"cmake", "make"} and len(build) >= 15


def test_make_tokens_map_non_ascii_text_to_byte_offsets():
    from cuda2hip.lang.build.tokens import make_tokens

    data = "NVFLAGS = -O3 # é ü\n\tnvcc -arch=sm_80 ñ.cu\n".encode()
    tokens = make_tokens(data, 0, len(data))
    assert [data[t.start:t.end].decode() for t in tokens] == [t.text for t in tokens]
    assert [t.text for t in tokens] == ["NVFLAGS", "=", "-O3", "#", "é", "ü", "nvcc", "-arch=sm_80", "ñ.cu"]
