"""Configuration that cannot be used is an error (exit 2, the file and what is wrong), never
silently ignored or a traceback."""

from __future__ import annotations

import os

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


# --- where configuration is found (issue 32) -----------------------------------------------------

HIDE_ALL = '[tool.cuda2hip]\nselect = ["HIP999"]\n'  # a planted config: silences every rule


def _checked(project) -> str:
    (project / "a.cu").write_text(DIRTY)
    r = run_cli("check", "--format", "concise", "a.cu", cwd=project)
    return r.stdout + r.stderr


@pytest.mark.parametrize("name", ["pyproject.toml", "cuda2hip.toml"])
def test_a_configuration_in_a_folder_others_can_write_is_not_read(tmp_path, name):
    """Like /tmp: anyone may put a cuda2hip.toml or pyproject.toml there, above every project
    below it. It was read, and decided the rules and the excludes of the run."""
    open_to_all = tmp_path / "open_to_all"
    open_to_all.mkdir()
    os.chmod(open_to_all, 0o1777)
    (open_to_all / name).write_text(HIDE_ALL if name == "pyproject.toml" else 'select = ["HIP999"]\n')
    project = open_to_all / "work"
    project.mkdir()
    out = _checked(project)
    assert "HIP101" in out, out
    assert f"not reading {open_to_all / name}" in out and "other users can write" in out, out


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_configuration_in_a_folder_of_another_user_is_not_read(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text(HIDE_ALL)
    os.chown(other, 65534, 65534)
    os.chown(other / "pyproject.toml", 65534, 65534)
    project = other / "work"
    project.mkdir()
    out = _checked(project)
    assert "HIP101" in out and "belongs to another user" in out, out
    # named on the command line, it is the user's choice
    r = run_cli("check", "--config", other / "pyproject.toml", "--format", "concise", "a.cu", cwd=project)
    assert "HIP101" not in r.stdout, r.stdout


def test_a_configuration_file_others_can_write_is_not_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "cuda2hip.toml").write_text('select = ["HIP999"]\n')
    os.chmod(project / "cuda2hip.toml", 0o666)
    out = _checked(project)
    assert "HIP101" in out and "other users can write" in out, out


def test_discovery_stops_at_the_repository_root(tmp_path):
    """A configuration above the repository (a home folder's pyproject.toml, a monorepo's
    parent) is not the project's."""
    (tmp_path / "cuda2hip.toml").write_text('select = ["HIP999"]\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    out = _checked(repo / "src")
    assert "HIP101" in out and "cuda2hip: warning" not in out, out
    (repo / "cuda2hip.toml").write_text('select = ["HIP999"]\n')  # the repository's own: read
    assert "HIP101" not in _checked(repo / "src")


@pytest.mark.parametrize("how", ["relative", "absolute", "link"])
def test_rule_dirs_outside_the_project_are_refused(tmp_path, how):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "r.yaml").write_text(
        "code: USR001\nid: planted\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
        "docs: {what: w, why: y}\nrule: {pattern: 'cudaFree($$$A)'}\n"
        "fix: {applicability: safe, template: 'system(\"rm -rf ~\")'}\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    if how == "link":
        (project / "rules").symlink_to(elsewhere)
    where = {"relative": "../elsewhere", "absolute": str(elsewhere), "link": "rules"}[how]
    (project / "cuda2hip.toml").write_text(f'rule-dirs = ["{where}"]\n')
    (project / "a.cu").write_text(DIRTY)
    r = run_cli("fix", "a.cu", cwd=project)
    assert r.returncode == 2 and "outside the project" in r.stderr and "rule-dirs" in r.stderr, r.stderr
    assert (project / "a.cu").read_text() == DIRTY
