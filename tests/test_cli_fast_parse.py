"""cli_options.parse reads plain `check` / `fix` calls without click: for every call it accepts,
the values must be the ones click gives; every call it does not understand goes to click."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cuda2hip.cli.group import group
from cuda2hip.cli.options import CHECK, FIX, parse

ACCEPTED = [
    ["check"],
    ["check", "a.cu", "b.cu"],
    ["check", "--format", "concise", "a.cu"],
    ["check", "--format=json", "-o", "out.json", "a.cu", "--no-cache"],
    ["check", "-j4", "--fail-on", "error", "--select", "HIP1,HIP2", "--ignore=HIP102", "x"],
    ["check", "--offload-arch", "gfx90a", "--offload-arch=gfx942", "--roc", "--experimental", "."],
    ["check", "--kernel-launch", "hip", "--target-rocm", "6.4", "--isolated", "--show-suppressed",
     "--force-exclude", "--statistics", "--extend-select", "HIP301", "--", "-odd-name.cu"],
    ["check", "--markdown-limit", "0", "--format", "markdown", "a.cu"],
    ["fix", "--follow-includes", "a.cu"],
    ["check", "--verbose", "a.cu"],
    ["fix", "-v", "--diff", "a.cu"],
    ["check", "--baseline", "b.json", "--write-baseline", "w.json", "--jobs", "2", "--config", "c.toml", "a.cu"],
    ["fix", "--unsafe-fixes", "--diff", "a.cu"],
    ["fix", "--stdout", "a.cu", "--format", "concise"],
    ["fix", "--output-dir", "out", "--rename", "src", "--report", "r.html", "-j", "1"],
    ["check", "--min-severity", "info", "--show-info", "--show-fixes", "-q", "--exit-zero", "a.cu"],
    ["fix", "--quiet", "--show-fixes", "--min-severity=error", "--format", "gitlab", "a.cu"],
]

REFUSED = [
    ["check", "--help"], ["check", "-h"], ["--version"], ["rules"], ["explain", "HIP101"],
    ["check", "--no-such-option"], ["check", "--fail-on", "bogus"], ["check", "-j", "0"], ["check", "--markdown-limit", "-1"],
    ["check", "-j", "two"], ["check", "--format"], ["check", "--no-cache=1"],
    ["check", "--output", "."], ["fix", "--output-dir", "a.cu"], ["check", "-vq"],
]


def _click_values(argv: list[str]) -> tuple[tuple[str, ...], dict]:
    cmd = group.commands[argv[0]]
    ctx = cmd.make_context(argv[0], list(argv[1:]))
    values = dict(ctx.params)
    return tuple(values.pop("paths")), values


@pytest.mark.parametrize("argv", ACCEPTED, ids=" ".join)
def test_fast_parse_gives_what_click_gives(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.cu").write_text("")
    (tmp_path / "src").mkdir()
    parsed = parse(argv)
    assert parsed is not None
    command, paths, values = parsed
    assert (command, (paths, values)) == (argv[0], _click_values(argv))


@pytest.mark.parametrize("argv", REFUSED, ids=" ".join)
def test_what_the_fast_parse_does_not_understand_goes_to_click(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.cu").write_text("")
    assert parse(argv) is None


def test_every_option_of_both_commands_is_covered():
    given = {a.split("=")[0] for argv in ACCEPTED for a in argv if a.startswith("-")}
    given |= {"-j", "-o"}  # as -j4 / -o FILE
    for spec in (CHECK, FIX):
        for opt in spec:
            assert set(opt.decls) & given, opt.decls


def test_a_plain_check_does_not_import_click(tmp_path):
    (tmp_path / "a.cu").write_text("#include <cuda_runtime.h>\n")
    code = ("import sys\nfrom cuda2hip.cli.commands import main\n"
            "try:\n    main(['check', '--format', 'concise', 'a.cu'])\nexcept SystemExit as e:\n    code = e.code\n"
            "print('CLICK', 'click' in sys.modules, code)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert "CLICK False 1" in r.stdout, r.stdout + r.stderr
    assert "a.cu:1:10: HIP100" in r.stdout
