"""End-to-end tests of `check` and `fix` as users run them (in process through click's CliRunner: exit codes, output, files)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import FIXTURES, run_cli

CLEAN = "#include <hip/hip_runtime.h>\nint main() { hipFree(nullptr); return 0; }\n"
DIRTY = ('#include <cuda_runtime.h>\n'
         'int main() {\n'
         '  float* p;\n'
         '  // cudaMalloc allocates device memory\n'
         '  if (cudaMalloc(&p, 4) != cudaSuccess) { puts("cudaMalloc failed"); return 1; }\n'
         '  int cudaMallocWrapperCount = 0; char c = \'c\';\n'
         '  cudaFree(p);\n'
         '  return cudaMallocWrapperCount;\n'
         '}\n')


def write(path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_check_clean_file_exits_0(tmp_path):
    f = write(tmp_path / "ok.cu", CLEAN)
    r = run_cli("check", f, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "No findings" in r.stdout


def test_check_reports_findings_exit_1_and_touches_nothing(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    r = run_cli("check", "--format", "concise", f, cwd=tmp_path)
    assert r.returncode == 1
    lines = r.stdout.strip().splitlines()
    assert "a.cu:1:10: HIP100" in lines[0]
    assert any(":5:7: HIP101" in line and "cudaMalloc" in line for line in lines)
    assert f.read_text() == DIRTY


def test_json_format_shape(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    r = run_cli("check", "--format", "json", f, cwd=tmp_path)
    assert r.returncode == 1
    payload = json.loads(r.stdout)
    assert set(payload) == {"findings", "summary"}
    first = payload["findings"][0]
    for key in ("code", "rule_id", "severity", "path", "line", "column", "end_line", "end_column",
                "message", "fix", "suppressed", "effort"):
        assert key in first
    malloc = [x for x in payload["findings"] if x["code"] == "HIP101" and "cudaMalloc`" in x["message"]]
    assert len(malloc) == 1
    m = malloc[0]
    assert (m["line"], m["column"], m["end_line"], m["end_column"]) == (5, 7, 5, 17)
    assert m["fix"]["applicability"] == "safe"
    assert m["fix"]["edits"][0]["content"] == "hipMalloc"
    assert payload["summary"]["findings"] == len(payload["findings"])
    assert sum(payload["summary"]["by_severity"].values()) == len(payload["findings"])


def test_fix_rewrites_code_but_not_comments_strings_or_lookalikes(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    r = run_cli("fix", f, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = f.read_text()
    assert "#include <hip/hip_runtime.h>" in out
    assert "if (hipMalloc(&p, 4) != hipSuccess)" in out
    assert "hipFree(p);" in out
    assert "// cudaMalloc allocates device memory" in out  # comment untouched
    assert 'puts("cudaMalloc failed")' in out  # string untouched
    assert "int cudaMallocWrapperCount = 0; char c = 'c';" in out  # look-alike untouched
    assert "Fixed 4 findings in 1 file" in r.stdout


def test_fix_is_idempotent(tmp_path):
    f = write(tmp_path / "a.cu", (FIXTURES / "core" / "stream_events.cu").read_text())
    assert run_cli("fix", f, cwd=tmp_path).returncode == 0
    once = f.read_bytes()
    r = run_cli("fix", "--diff", f, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert run_cli("fix", f, cwd=tmp_path).returncode == 0
    assert f.read_bytes() == once


def test_fix_diff_and_stdout_write_nothing(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    r = run_cli("fix", "--diff", f, cwd=tmp_path)
    assert r.returncode == 1
    assert "-#include <cuda_runtime.h>" in r.stdout and "+#include <hip/hip_runtime.h>" in r.stdout
    r = run_cli("fix", "--stdout", f, cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("#include <hip/hip_runtime.h>\n")
    assert f.read_text() == DIRTY


def test_stdout_needs_a_single_file(tmp_path):
    write(tmp_path / "a.cu", DIRTY)
    r = run_cli("fix", "--stdout", tmp_path, cwd=tmp_path)
    assert r.returncode == 2 and "exactly one file" in r.stderr


def test_fix_keeps_crlf_bom_and_permissions(tmp_path):
    text = DIRTY.replace("\n", "\r\n").encode()
    f = write(tmp_path / "w.cu", b"\xef\xbb\xbf" + text)
    os.chmod(f, 0o751)
    assert run_cli("fix", f, cwd=tmp_path).returncode == 0
    out = f.read_bytes()
    assert out.startswith(b"\xef\xbb\xbf#include <hip/hip_runtime.h>\r\n")
    assert b"\r\n" in out and out.count(b"\n") == out.count(b"\r\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".w.cu.")]  # no temp files left


def test_fail_on_threshold(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    assert run_cli("check", "--fail-on", "error", f, cwd=tmp_path).returncode == 0
    assert run_cli("check", "--fail-on", "warning", f, cwd=tmp_path).returncode == 1


def test_select_and_ignore(tmp_path):
    f = write(tmp_path / "a.cu", DIRTY)
    r = run_cli("check", "--format", "json", "--select", "HIP100", f, cwd=tmp_path)
    codes = {x["code"] for x in json.loads(r.stdout)["findings"]}
    assert codes == {"HIP100"}
    r = run_cli("check", "--format", "json", "--ignore", "HIP100", f, cwd=tmp_path)
    codes = {x["code"] for x in json.loads(r.stdout)["findings"]}
    assert "HIP100" not in codes and "HIP101" in codes
    r = run_cli("check", "--select", "HIP9", f, cwd=tmp_path)
    assert r.returncode == 2 and "matches no rule" in r.stderr


# --- bad input: clear message, exit 2, every file untouched -------------------------------

@pytest.mark.parametrize("name,payload,reason", [
    ("utf16.cu", "// caf\xe9\nint cudaMallocCount;\ncudaFree(p);\n".encode("utf-16"), "UTF-16 text"),
    ("image.cu", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRcudaMalloc", "binary file"),
    ("notes.cu", b"This is a README file. It explains how to build the project.\n"
                 b"Run make, then run the tests. Thanks!\n", "does not parse as C/C++/CUDA"),
])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_bad_input_is_reported_and_untouched(tmp_path, name, payload, reason, command):
    bad = write(tmp_path / name, payload)
    good = write(tmp_path / "good.cu", DIRTY)
    r = run_cli(command, "--format", "concise", tmp_path, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{name}: error: " in r.stdout and reason in r.stdout
    assert bad.read_bytes() == payload
    # the other file was still processed
    if command == "fix":
        assert good.read_text() != DIRTY
    else:
        assert "good.cu:1:10: HIP100" in r.stdout


def test_missing_path(tmp_path):
    r = run_cli("check", tmp_path / "nope.cu", cwd=tmp_path)
    assert r.returncode == 2
    assert "nope.cu: no such file or directory" in r.stdout


def test_unreadable_file(tmp_path, monkeypatch):
    # Runs in-process: CI runs as root, for whom permission bits do not stop a read.
    from cuda2hip.system import nofollow
    from cuda2hip.pipeline import Mode, run
    from cuda2hip.settings import Settings

    f = write(tmp_path / "locked.cu", DIRTY)
    real = nofollow.read_found

    def deny(path):
        if path.endswith("locked.cu"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(nofollow, "read_found", deny)
    result = run([str(f)], Settings(root=tmp_path, use_cache=False), Mode.FIX)
    assert [(e.path.endswith("locked.cu"), e.reason) for e in result.errors] == [
        (True, "permission denied (unreadable)")]
    monkeypatch.setattr(nofollow, "read_found", real)
    assert f.read_text() == DIRTY


def test_malformed_rule_yaml_names_file_rule_and_field(tmp_path):
    rules = tmp_path / "my_rules"
    write(rules / "bad.yaml", "code: USR001\nid: bad-rule\nkind: pattern\nseverity: loud\n"
                              "summary: s\nmessage: m\ndocs: {what: a, why: b}\n")
    write(tmp_path / "cuda2hip.toml", 'rule-dirs = ["my_rules"]\n')
    f = write(tmp_path / "a.cu", DIRTY)
    for cmd in ("check", "fix"):
        r = run_cli(cmd, f, cwd=tmp_path)
        assert r.returncode == 2
        assert "bad.yaml" in r.stderr and "USR001 (bad-rule)" in r.stderr and "`severity`" in r.stderr
    assert f.read_text() == DIRTY


def test_rule_yaml_that_is_not_yaml(tmp_path):
    write(tmp_path / "r" / "x.yaml", "code: [unclosed\n")
    write(tmp_path / "cuda2hip.toml", 'rule-dirs = ["r"]\n')
    r = run_cli("check", write(tmp_path / "a.cu", CLEAN), cwd=tmp_path)
    assert r.returncode == 2 and "x.yaml: not valid YAML" in r.stderr


def test_bad_config_key(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.cuda2hip]\nselectt = ['HIP1']\n")
    r = run_cli("check", write(tmp_path / "a.cu", CLEAN), cwd=tmp_path)
    assert r.returncode == 2 and "selectt" in r.stderr and "pyproject.toml" in r.stderr


# --- user rules ------------------------------------------------------------------------

USER_RULE = """\
code: USR101
id: no-raw-device-reset
kind: pattern
severity: error
summary: Device resets in library code
message: "Do not reset the device inside `$FN`"
rule:
  any:
    - pattern: cudaDeviceReset()
    - pattern: hipDeviceReset()
  inside:
    kind: function_definition
    stopBy: end
    has:
      kind: function_declarator
      has: {kind: identifier, regex: "^(?P<fn>lib_\\\\w+)$"}
fix:
  applicability: unsafe
  template: "/* removed device reset */ (void)0"
docs:
  what: Flags device resets in library functions.
  why: A library must not reset a device its caller owns.
  references: ["team style guide"]
tests:
  valid:
    - "int main() { cudaDeviceReset(); }"
  invalid:
    - code: "void lib_init() { cudaDeviceReset(); }"
      fixed: "void lib_init() { /* removed device reset */ (void)0; }"
"""


def test_user_rule_directory_from_config_end_to_end(tmp_path):
    write(tmp_path / "team_rules" / "reset.yaml", USER_RULE)
    write(tmp_path / "pyproject.toml", '[tool.cuda2hip]\nrule-dirs = ["team_rules"]\n')
    src = write(tmp_path / "src" / "lib.cu",
                "#include <cuda_runtime.h>\nvoid lib_init() {\n  cudaDeviceReset();\n}\n"
                "int main() { cudaDeviceReset(); }\n")
    r = run_cli("check", "--format", "json", "src", cwd=tmp_path)
    findings = json.loads(r.stdout)["findings"]
    mine = [x for x in findings if x["code"] == "USR101"]
    assert len(mine) == 1 and mine[0]["line"] == 3 and mine[0]["severity"] == "error"
    r = run_cli("rules", "--format", "json", cwd=tmp_path)
    assert any(x["code"] == "USR101" for x in json.loads(r.stdout))
    r = run_cli("test-rules", "team_rules", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    r = run_cli("fix", "--unsafe-fixes", "src", cwd=tmp_path)
    out = src.read_text()
    assert "void lib_init() {\n  /* removed device reset */ (void)0;\n}" in out
    assert "int main() { hipDeviceReset(); }" in out
    r = run_cli("explain", "USR101", cwd=tmp_path)
    assert r.returncode == 0 and "A library must not reset a device" in r.stdout


def test_test_rules_fails_on_a_wrong_expectation(tmp_path):
    broken = USER_RULE.replace("fixed: \"void lib_init() { /* removed", "fixed: \"void lib_init() { /* gone")
    write(tmp_path / "r" / "reset.yaml", broken)
    r = run_cli("test-rules", tmp_path / "r", cwd=tmp_path)
    assert r.returncode == 1 and "FAIL USR101-invalid-0" in r.stdout


def test_builtin_test_rules_pass():
    r = run_cli("test-rules")
    assert r.returncode == 0, r.stdout


def test_rules_and_explain():
    r = run_cli("rules")
    assert r.returncode == 0 and "HIP101" in r.stdout
    r = run_cli("explain", "HIP101")
    assert r.returncode == 0
    assert "## What it does" in r.stdout and "## References" in r.stdout
    r = run_cli("explain", "NOPE999")
    assert r.returncode == 2


@pytest.mark.parametrize("command", ["check", "fix"])
def test_file_names_after_a_double_dash_are_never_options(tmp_path, command):
    """`cuda2hip check -- FILES` (what the pre-commit hooks run): a name like `--output=../x.cu`
    is a file, in both command-line parsers (the fast one and click's, `-vj1` sends a call
    there)."""
    odd = tmp_path / "--output=.."
    odd.mkdir()
    for extra in ([], ["-vj1"]):
        write(odd / "x.cu", DIRTY)
        r = run_cli(command, "--format", "concise", *extra, "--", "--output=../x.cu", cwd=tmp_path)
        assert r.returncode == (1 if command == "check" else 0), r.stdout + r.stderr
        assert not (tmp_path.parent / "x.cu").exists()
        assert "--output=../x.cu" in r.stdout or command == "fix", r.stdout
        assert ((odd / "x.cu").read_text() == DIRTY) == (command == "check")
