"""Configuration that cannot be used is an error (exit 2, the file and what is wrong), never
silently ignored or a traceback."""

from __future__ import annotations

import pytest

from conftest import run_cli

DIRTY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n"


def _project(tmp_path, config_name: str, config: str):
    (tmp_path / config_name).write_text(config)
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "v.cu").write_text(DIRTY)
    (tmp_path / "a.cu").write_text(DIRTY)
    return vendor / "v.cu"


def test_a_broken_pyproject_is_an_error_not_ignored(tmp_path):
    # A syntax error far from [tool.cuda2hip] used to make discovery skip the file, so its
    # `exclude` was dropped and the excluded vendor code was rewritten, exit 0.
    vendored = _project(tmp_path, "pyproject.toml",
                        '[project]\nname = "x"\ndependencies = ["numpy",]]\n'
                        '[tool.cuda2hip]\nexclude = ["vendor/"]\n')
    r = run_cli("fix", ".", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "pyproject.toml" in r.stderr and "line 3" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert vendored.read_text() == DIRTY
    assert (tmp_path / "a.cu").read_text() == DIRTY  # nothing runs on a configuration it cannot read


@pytest.mark.parametrize("how", ["found", "named"])
def test_a_broken_cuda2hip_toml_is_an_error(tmp_path, how):
    _project(tmp_path, "cuda2hip.toml", 'exclude = ["vendor/",]]\n')
    args = ["--config", "cuda2hip.toml"] if how == "named" else []
    r = run_cli("check", *args, ".", cwd=tmp_path)
    assert r.returncode == 2 and "cuda2hip.toml" in r.stderr and "line 1" in r.stderr, r.stderr


def test_an_undecodable_pyproject_is_an_error(tmp_path):
    _project(tmp_path, "pyproject.toml", "")
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.cuda2hip]\nexclude = ["vendor/\xff"]\n')
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "pyproject.toml" in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("config, expected", [
    ("[build]\noffload-arch = 42\n", "offload-arch"),
    ("[build]\noffload-arch = [42]\n", "offload-arch"),
    ("[build]\nofload-arch = ['gfx942']\n", "ofload-arch"),
    ("jobs = -3\n", "jobs"),
    ("jobs = 0\n", "jobs"),
    ("[python]\nembeded = true\n", "embeded"),
    ("[file-types]\nfortran = ['.f90']\n", "fortran"),
    ("[file-types]\ncuda = '.cu'\n", "file-types"),
])
def test_invalid_values_are_reported_with_their_key(tmp_path, config, expected):
    (tmp_path / "cuda2hip.toml").write_text(config)
    (tmp_path / "a.cu").write_text(DIRTY)
    for command in ("check", "fix"):
        r = run_cli(command, "a.cu", cwd=tmp_path)
        assert r.returncode == 2, (config, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and expected in r.stderr and "cuda2hip.toml" in r.stderr, r.stderr
    assert (tmp_path / "a.cu").read_text() == DIRTY


def test_valid_build_and_file_type_settings_still_work(tmp_path):
    (tmp_path / "cuda2hip.toml").write_text(
        "jobs = 2\n[build]\noffload-arch = 'gfx942'\n[file-types]\ncuda = ['.cu', '.cuda']\n")
    (tmp_path / "a.cuda").write_text(DIRTY)
    r = run_cli("check", "--format", "concise", "a.cuda", cwd=tmp_path)
    assert r.returncode == 1 and "a.cuda:2:" in r.stdout, r.stdout + r.stderr
