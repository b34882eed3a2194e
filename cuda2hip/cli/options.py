"""The options of `check` and `fix`, as data: cli.py builds the click commands from them, and
`parse` reads a plain call of either command from them without importing click (a pre-commit
call, `cuda2hip check --format concise a.cu b.cu`, would spend ~15% of its time importing click).

`parse` only accepts what it understands exactly as click would; for anything else (help, an
unknown or malformed option, a value click rejects) it returns None and click handles the call,
error messages included.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import rocm_releases

_UNSET = object()


class Option:
    """One option. `kind`: flag, flag_value, text, choice, int (at least `minimum`), path."""

    __slots__ = ("decls", "dest", "kind", "help", "choices", "flag_value", "metavar", "default",
                 "show_default", "multiple", "minimum", "file_okay", "dir_okay")

    def __init__(self, decls: tuple[str, ...], dest: str, kind: str, help: str | None = None, *,
                 choices: tuple[str, ...] = (), flag_value: str | None = None, metavar: str | None = None,
                 default=_UNSET, show_default: bool = False, multiple: bool = False, minimum: int | None = None,
                 file_okay: bool = True, dir_okay: bool = True):
        self.decls, self.dest, self.kind, self.help = decls, dest, kind, help
        self.choices, self.flag_value, self.metavar = choices, flag_value, metavar
        self.default = (False if kind == "flag" else None) if default is _UNSET else default
        self.show_default, self.multiple, self.minimum = show_default, multiple, minimum
        self.file_okay, self.dir_okay = file_okay, dir_okay

    @property
    def takes_value(self) -> bool:
        return self.kind not in ("flag", "flag_value")

    def initial(self):
        return () if self.multiple else self.default


SEVERITIES = ("hint", "info", "warning", "error")

COMMON = (
    Option(("--config",), "config_path", "path", dir_okay=False,
           help="Configuration file (default: nearest cuda2hip.toml or pyproject.toml with [tool.cuda2hip])."),
    Option(("--isolated",), "isolated", "flag", help="Ignore configuration files."),
    Option(("--select",), "select", "text",
           help="Comma-separated codes, code prefixes or rule ids to run (ALL: every rule, opt-in ones included)."),
    Option(("--extend-select",), "extend_select", "text", help="Codes to run in addition to the selection."),
    Option(("--ignore",), "ignore", "text", help="Codes not to run."),
    Option(("--fail-on",), "fail_on", "choice", choices=SEVERITIES,
           help="Lowest severity that makes the exit code 1 (default: warning)."),
    Option(("--target-rocm",), "target_rocm", "choice", choices=rocm_releases.AUDITED,
           help=f"ROCm release to migrate for (default: {rocm_releases.DEFAULT}, the newest; or `target-rocm` in "
                "the configuration): write only HIP names its headers declare and report what it lacks. "
                "The releases the name tables were audited against (docs/audit.md)."),
    Option(("--offload-arch",), "offload_arch", "text", multiple=True, metavar="GFX",
           help="AMD GPU target(s) for build files (e.g. gfx942; repeat or comma-separate): "
                "replaces CUDA architectures, which cannot be mapped automatically."),
    Option(("--experimental",), "experimental", "flag", default=None,
           help="Allow mappings the tables mark experimental."),
    Option(("--roc",), "library_profile", "flag_value", flag_value="roc",
           help="Map libraries to roc* (rocBLAS, ...) instead of hip* (hipBLAS, ...)."),
    Option(("--kernel-launch",), "kernel_launch", "choice", choices=("keep", "hip"),
           help="Keep <<<...>>> launches (default) or convert them to hipLaunchKernelGGL."),
    Option(("--jobs", "-j"), "jobs", "int", minimum=1, help="Worker processes (default: CPU count)."),
    Option(("--no-cache",), "no_cache", "flag", help="Do not read or write the result cache (the rule caches, keyed by the rule files' content, are still used)."),
    Option(("--verbose", "-v"), "verbose", "flag", help="Say on stderr what the result cache did (hits, misses, entries refused)."),
    Option(("--show-suppressed",), "show_suppressed", "flag", help="Also print suppressed findings."),
    Option(("--force-exclude",), "force_exclude", "flag", default=None,
           help="Apply exclude patterns to paths named on the command line too."),
    Option(("--markdown-limit",), "markdown_limit", "int", minimum=0, metavar="CHARS",
           help="Longest --format markdown report (default 65536, a GitHub comment; 0: no limit)."),
    Option(("--follow-includes",), "follow_includes", "flag", default=None,
           help="Also take in the local headers (#include \"...\" inside the project) that the named files "
                "include; by default they are reported (HIP005), not migrated."),
)

CORE_FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit", "markdown", "html", "api-csv")
STATISTICS = Option(("--statistics",), "statistics", "flag",
                    help="Print the number of findings per rule instead of the findings "
                         "(with --output, as well as the report).")

# What the report shows and the exit status (docs/reports.md, "Output options").
OUTPUT = (
    Option(("--min-severity",), "min_severity", "choice", choices=SEVERITIES,
           help="Lowest severity listed by the text, concise, github, gitlab and junit formats "
                "(default: warning; the findings below are counted in one line)."),
    Option(("--show-info",), "show_info", "flag", help="List info and hint findings too (--min-severity hint)."),
    Option(("--show-fixes",), "show_fixes", "flag",
           help="Show each fix's edit under its finding (text format); `fix`: list the fixes applied."),
    Option(("--quiet", "-q"), "quiet", "flag", help="Print the findings only: no summary, nothing on success."),
    Option(("--exit-zero",), "exit_zero", "flag",
           help="Exit 0 even when findings remain (errors still exit 2)."),
)

CHECK = (
    Option(("--format",), "fmt", "text", default="text", show_default=True,
           help="Output format: " + ", ".join(CORE_FORMATS) + " (see docs/reports.md)."),
    Option(("--output", "-o"), "output", "path", dir_okay=False, help="Write the report to this file."),
    STATISTICS,
    Option(("--baseline",), "baseline", "path", dir_okay=False,
           help="Report only findings that this baseline file does not list."),
    Option(("--write-baseline",), "write_baseline", "path", dir_okay=False,
           help="Record the current findings in this baseline file and exit 0."),
) + OUTPUT + COMMON

FIX = (
    Option(("--unsafe-fixes",), "unsafe_fixes", "flag", help="Also apply fixes marked unsafe."),
    Option(("--diff",), "diff", "flag", help="Print a unified diff of the changes; write nothing."),
    Option(("--stdout",), "to_stdout", "flag", help="For a single file: print the migrated text; write nothing."),
    Option(("--format",), "fmt", "text", default="text", show_default=True,
           help="Format of the report of what remains."),
    Option(("--output", "-o"), "output", "path", dir_okay=False, help="Write the report to this file."),
    Option(("--report",), "report_file", "path", dir_okay=False,
           help="Write a report of the rewrite, with the diff of every changed file "
                "(format by suffix: .html, .md, .json, .sarif; .csv: the per-API summary)."),
    Option(("--output-dir",), "output_dir", "path", file_okay=False,
           help="Write a complete migrated copy of the directory SRC here (other files copied as they are); "
                "SRC is left untouched."),
    Option(("--rename",), "rename", "flag",
           help="Rename CUDA sources (.cu -> .hip) and update the includes that name them (one directory)."),
    STATISTICS,
) + OUTPUT + COMMON

# `lsp`: the options that decide what `check` reports for a file, and its baseline.
LSP = tuple(o for o in CHECK if o.dest == "baseline") + tuple(o for o in COMMON if o.dest not in (
    "fail_on", "jobs", "verbose", "show_suppressed", "force_exclude", "markdown_limit", "follow_includes"))

COMMANDS = {"check": CHECK, "fix": FIX}


def _path_ok(value: str, opt: Option | None) -> bool:
    """Whether click.Path (exists=False) accepts `value`: a path that exists must be of an allowed
    kind and readable."""
    try:
        st = os.stat(value)
    except OSError:
        return True
    if opt is not None and ((not opt.file_okay and stat.S_ISREG(st.st_mode))
                            or (not opt.dir_okay and stat.S_ISDIR(st.st_mode))):
        return False
    return os.access(value, os.R_OK)


_MISSING = object()


def _convert(opt: Option, raw: str):
    """The value click would give, or _MISSING where click would refuse it (it then says why)."""
    if opt.kind == "text":
        return raw
    if opt.kind == "choice":
        return raw if raw in opt.choices else _MISSING
    if opt.kind == "int":
        try:
            value = int(raw.strip())
        except ValueError:
            return _MISSING
        return value if opt.minimum is None or value >= opt.minimum else _MISSING
    if opt.kind == "path":
        return Path(raw) if raw and _path_ok(raw, opt) else _MISSING
    return _MISSING


def parse(argv: list[str]) -> tuple[str, tuple[str, ...], dict] | None:
    """(command, paths, option values by dest) of a plain `check` / `fix` call, else None."""
    if not argv or argv[0] not in COMMANDS:
        return None
    options = COMMANDS[argv[0]]
    by_name = {d: o for o in options for d in o.decls}
    values = {o.dest: o.initial() for o in options}
    paths: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            paths.extend(args)
            break
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        if arg.startswith("--"):
            name, eq, inline = arg.partition("=")
        elif len(arg) > 2:  # -j4, -oFILE
            name, eq, inline = arg[:2], "=", arg[2:]
        else:
            name, eq, inline = arg, "", ""
        opt = by_name.get(name)
        if opt is None:
            return None  # --help, --version, a typo: click answers
        if not opt.takes_value:
            if eq:
                return None
            values[opt.dest] = True if opt.kind == "flag" else opt.flag_value
            continue
        if not eq:
            inline = next(args, None)
            if inline is None:
                return None
        value = _convert(opt, inline)
        if value is _MISSING:
            return None
        values[opt.dest] = values[opt.dest] + (value,) if opt.multiple else value
    if not all(p and _path_ok(p, None) for p in paths):
        return None
    return argv[0], tuple(paths), values
