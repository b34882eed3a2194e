"""Command line: `cuda2hip check|fix|rules|explain|coverage|test-rules`.

Exit codes: 0 nothing at or above --fail-on; 1 findings (or, with --diff, changes); 2 usage,
configuration, rule or I/O error.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

# Start-up (imports, rules, name tables) allocates tens of thousands of objects that all stay
# alive: with the default first-generation threshold (700) the collector runs ~50 times during a
# pre-commit call and frees next to nothing, ~6 ms of ~110. Garbage cycles are still collected.
gc.set_threshold(100_000, 10, 10)

import click  # noqa: E402

from . import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
SEVERITIES = ["hint", "info", "warning", "error"]
CORE_FORMATS = ["text", "concise", "json", "sarif", "github", "markdown", "html"]
# `fix --report FILE`: the report format follows the file name.
REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                   ".json": "json", ".sarif": "sarif"}


def _formats() -> list[str]:
    from .report import FORMATS

    return list(FORMATS)


class UsageFailure(click.ClickException):
    exit_code = EXIT_ERROR

    def show(self, file=None):
        click.echo(f"cuda2hip: error: {self.format_message()}", err=True)


def _fail(message: str):
    raise UsageFailure(message)


def common_options(fn):
    options = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="Configuration file (default: nearest cuda2hip.toml or pyproject.toml with [tool.cuda2hip])."),
        click.option("--isolated", is_flag=True, help="Ignore configuration files."),
        click.option("--select", help="Comma-separated codes, code prefixes or rule ids to run (ALL: every rule, opt-in ones included)."),
        click.option("--extend-select", help="Codes to run in addition to the selection."),
        click.option("--ignore", help="Codes not to run."),
        click.option("--fail-on", type=click.Choice(SEVERITIES), help="Lowest severity that makes the exit code 1 (default: warning)."),
        click.option("--target-rocm", metavar="X.Y", help="Map only to HIP APIs that exist in this ROCm version."),
        click.option("--offload-arch", "offload_arch", multiple=True, metavar="GFX",
                     help="AMD GPU target(s) for build files (e.g. gfx942; repeat or comma-separate): "
                          "replaces CUDA architectures, which cannot be mapped automatically."),
        click.option("--experimental", is_flag=True, default=None, help="Allow mappings the tables mark experimental."),
        click.option("--roc", "library_profile", flag_value="roc", default=None, help="Map libraries to roc* (rocBLAS, ...) instead of hip* (hipBLAS, ...)."),
        click.option("--kernel-launch", type=click.Choice(["keep", "hip"]), default=None, help="Keep <<<...>>> launches (default) or convert them to hipLaunchKernelGGL."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count)."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the cache."),
        click.option("--show-suppressed", is_flag=True, help="Also print suppressed findings."),
        click.option("--force-exclude", is_flag=True, default=None, help="Apply exclude patterns to paths named on the command line too."),
        click.option("--markdown-limit", type=click.IntRange(min=0), metavar="CHARS",
                     help="Longest --format markdown report (default 65536, a GitHub comment; 0: no limit)."),
        click.option("--follow-includes", is_flag=True, default=None,
                     help="Also take in the local headers (#include \"...\" inside the project) that the named files "
                          "include; by default they are reported (HIP005), not migrated."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def _settings(opts: dict):
    from .config import ConfigError, build_settings
    from .rulebook.selection import split_codes

    try:
        settings = build_settings(opts.get("config_path"), isolated=opts.get("isolated", False))
    except ConfigError as exc:
        _fail(str(exc))
    if opts.get("select"):
        settings.select = split_codes(opts["select"])
    if opts.get("extend_select"):
        settings.extend_select = settings.extend_select + split_codes(opts["extend_select"])
    if opts.get("ignore"):
        settings.ignore = settings.ignore + split_codes(opts["ignore"])
    if opts.get("fail_on"):
        settings.fail_on = opts["fail_on"]
    if opts.get("target_rocm"):
        v = opts["target_rocm"]
        if not all(p.isdigit() for p in v.split(".")) or not 1 <= len(v.split(".")) <= 3:
            _fail(f"--target-rocm: {v!r} is not a version like 6.2")
        settings.target_rocm = v
    if opts.get("experimental"):
        settings.experimental = True
    _offload_archs(settings, opts.get("offload_arch") or ())
    if opts.get("library_profile"):
        settings.library_profile = opts["library_profile"]
    if opts.get("kernel_launch"):
        settings.kernel_launch = opts["kernel_launch"]
    if opts.get("jobs"):
        settings.jobs = opts["jobs"]
    if opts.get("no_cache"):
        settings.use_cache = False
    if opts.get("show_suppressed"):
        settings.show_suppressed = True
    if opts.get("force_exclude"):
        settings.force_exclude = True
    if opts.get("follow_includes"):
        settings.follow_includes = True
    if opts.get("unsafe_fixes"):
        settings.unsafe_fixes = True
    if opts.get("markdown_limit") is not None:
        settings.markdown_limit = opts["markdown_limit"]
    return settings


def _offload_archs(settings, given) -> None:
    from .buildsys.arch import OFFLOAD_ARCH, offload_archs

    build = settings.extra.setdefault("build", {})
    if given:
        build["offload-arch"] = [a for g in given for a in g.split(",") if a.strip()]
    for arch in offload_archs(settings):
        if not OFFLOAD_ARCH.match(arch):
            _fail(f"offload-arch: {arch!r} is not an AMD GPU target like gfx942 or gfx90a:xnack+")


def _engine(settings):
    from .match.compiled import RuleCompileError
    from .match.engine import Engine
    from .rulebook.loader import RuleError
    from .rulebook.selection import SelectionError

    try:
        engine = Engine(settings)  # rules compile when a file needs them (see runner.run_files)
    except (RuleError, RuleCompileError, SelectionError) as exc:
        _fail(str(exc))
    return engine


def _run(paths, settings, mode, engine):
    from .match.compiled import RuleCompileError
    from .runner import run

    try:
        return run(list(paths) or ["."], settings, mode, engine)
    except RuleCompileError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _interrupted()


def _run_tree(src, output_dir, rename, settings, engine):
    from .match.compiled import RuleCompileError
    from .output_tree import TreeError, migrate_tree

    try:
        run, summary = migrate_tree(Path(src), output_dir, settings, engine, rename=rename)
    except (TreeError, RuleCompileError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _interrupted()
    click.echo(summary.line(), err=True)
    return run


def _interrupted():
    click.echo("cuda2hip: interrupted; every file written is complete, the others are untouched",
               err=True)
    sys.exit(EXIT_INTERRUPTED)


def _exit_code(run, settings) -> int:
    from .findings import Severity

    if run.errors:
        return EXIT_ERROR
    threshold = Severity.parse(settings.fail_on)
    if any(f.severity >= threshold and not f.suppressed for f in run.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _emit(fmt: str, run, settings, engine, output: Path | None = None, err: bool = False,
          extra: dict | None = None) -> None:
    from .report import ReportContext, render

    stream = sys.stderr if err else sys.stdout
    color = output is None and stream.isatty()
    ctx = ReportContext(engine=engine, settings=settings, color=color, show_suppressed=settings.show_suppressed,
                        extra=extra or {})
    text = render(fmt, run, ctx)
    if output is not None:
        from .writeback import atomic_write

        atomic_write(output, text.encode("utf-8"))
    else:
        click.echo(text, nl=False, err=err)


def _report(fmt: str, run, settings, engine, output: Path | None, statistics: bool, err: bool = False) -> None:
    """The report in `fmt` (to `output` or the terminal); with --statistics the counts per rule
    replace it on the terminal (or come beside it when the report goes to a file)."""
    if statistics:
        if output is not None:
            _emit(fmt, run, settings, engine, output)
        _emit("statistics", run, settings, engine, None, err, extra={"json": fmt == "json"})
    else:
        _emit(fmt, run, settings, engine, output, err)


statistics_option = click.option("--statistics", is_flag=True,
                                 help="Print the number of findings per rule instead of the findings "
                                      "(with --output, as well as the report).")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="cuda2hip")
def main() -> None:
    """Migrate CUDA sources to HIP: lint for CUDA-only code and AMD portability hazards, and
    rewrite what can be rewritten safely."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--format", "fmt", default="text", show_default=True, help="Output format: " + ", ".join(CORE_FORMATS) + " (see docs/reports.md).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to this file.")
@statistics_option
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Report only findings that this baseline file does not list.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Record the current findings in this baseline file and exit 0.")
@common_options
def check(paths, fmt, output, statistics, baseline, write_baseline, **opts):
    """Report findings in PATHS (files or directories; default: the current directory)."""
    from .runner import Mode

    if fmt not in _formats():
        _fail(f"--format: {fmt!r} is not one of {', '.join(_formats())}")
    settings = _settings(opts)
    known = None
    if baseline is not None or write_baseline is not None:
        from .report import baseline as baselines
    if baseline is not None:
        try:
            known = baselines.read(baseline)
        except baselines.BaselineError as exc:
            _fail(str(exc))
    engine = _engine(settings)
    run = _run(paths, settings, Mode.CHECK, engine)
    if write_baseline is not None:
        count = baselines.write(run, settings.root, write_baseline)
        click.echo(f"Wrote {count} finding{'s' if count != 1 else ''} to the baseline {write_baseline}.")
        for e in run.errors:
            click.echo(f"{e.path}: error: {e.reason}", err=True)
        sys.exit(EXIT_ERROR if run.errors else EXIT_OK)
    if known is not None:
        baselines.apply(run, settings.root, known)
    _report(fmt, run, settings, engine, output, statistics)
    sys.exit(_exit_code(run, settings))


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes marked unsafe.")
@click.option("--diff", is_flag=True, help="Print a unified diff of the changes; write nothing.")
@click.option("--stdout", "to_stdout", is_flag=True, help="For a single file: print the migrated text; write nothing.")
@click.option("--format", "fmt", default="text", show_default=True, help="Format of the report of what remains.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to this file.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a report of the rewrite, with the diff of every changed file "
                   "(format by suffix: .html, .md, .json, .sarif).")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a complete migrated copy of the directory SRC here (other files copied as they are); SRC is left untouched.")
@click.option("--rename", is_flag=True, help="Rename CUDA sources (.cu -> .hip) and update the includes that name them (one directory).")
@statistics_option
@common_options
def fix(paths, unsafe_fixes, diff, to_stdout, fmt, output, report_file, output_dir, rename, statistics, **opts):
    """Apply fixes to PATHS in place (safe ones; unsafe ones with --unsafe-fixes), then report
    what remains. With --output-dir OUT SRC, write the migrated tree to OUT instead."""
    from .runner import Mode

    if fmt not in _formats():
        _fail(f"--format: {fmt!r} is not one of {', '.join(_formats())}")
    if diff and to_stdout:
        _fail("--diff and --stdout exclude each other")
    tree = output_dir is not None or rename
    if tree and (diff or to_stdout):
        _fail("--output-dir and --rename write files; they exclude --diff and --stdout")
    if tree and len(paths) != 1:
        _fail("--output-dir and --rename take exactly one source directory")
    report_fmt = None
    if report_file is not None:
        report_fmt = REPORT_SUFFIXES.get(report_file.suffix.lower())
        if report_fmt is None:
            _fail(f"--report: cannot tell the format of {report_file.name!r}; "
                  f"use a name ending in {', '.join(REPORT_SUFFIXES)}")
    opts["unsafe_fixes"] = unsafe_fixes
    settings = _settings(opts)
    engine = _engine(settings)
    if to_stdout:
        if len(paths) != 1 or not Path(paths[0]).is_file():
            _fail("--stdout takes exactly one file")
    if tree:
        run = _run_tree(paths[0], output_dir, rename, settings, engine)
    else:
        run = _run(paths, settings, Mode.PREVIEW if (diff or to_stdout) else Mode.FIX, engine)
    if report_fmt is not None:
        _emit(report_fmt, run, settings, engine, report_file, extra={"diffs": True})
    if to_stdout:
        # The named file, whatever else the run took in (--follow-includes adds its headers).
        named = Path(paths[0]).resolve()
        result = next((r for r in run.files if Path(r.path).resolve() == named), None)
        if result is not None and result.error is None:
            data = result.migrated if result.changed else Path(paths[0]).read_bytes()
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        _emit("concise" if fmt == "text" else fmt, run, settings, engine, output, err=output is None)
        sys.exit(_exit_code(run, settings))
    if diff:
        from .report.diff import unified_diff_bytes

        # Bytes, as `fix` would write them (any encoding, any line-break style).
        text = b"".join(unified_diff_bytes(r.path, r.original, r.migrated) for r in run.files if r.changed)
        sys.stdout.buffer.write(text)
        sys.stdout.flush()
        _report("concise" if fmt == "text" else fmt, run, settings, engine, output, statistics, err=output is None)
        code = _exit_code(run, settings)
        sys.exit(EXIT_ERROR if code == EXIT_ERROR else (EXIT_FINDINGS if text else code))
    _report(fmt, run, settings, engine, output, statistics)
    sys.exit(_exit_code(run, settings))


@main.command()
@click.option("--all", "show_all", is_flag=True, help="List opt-in rules as well as the default ones (they are marked).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--json-schema", is_flag=True, help="Print the JSON schema of a rule file.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
def rules(show_all, fmt, json_schema, config_path):
    """List the rules."""
    import json

    if json_schema:
        from .rulebook.schema import rule_json_schema

        click.echo(json.dumps(rule_json_schema(), indent=2))
        return
    settings = _settings({"config_path": config_path})
    engine = _engine(settings)
    all_rules = sorted(engine.all_rules, key=lambda r: r.code)
    if fmt == "json":
        click.echo(json.dumps([{
            "code": r.code, "id": r.id, "kind": r.kind, "language": r.language, "severity": r.severity,
            "enabled": r.enabled, "fix": r.fix.applicability if r.fix else None, "effort": r.effort,
            "summary": r.summary, "source": r.source_path,
        } for r in all_rules], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="cuda2hip rules", show_lines=False)
    for col in ("Code", "Id", "Lang", "Severity", "Fix", "Default", "Summary"):
        table.add_column(col, overflow="fold")
    for r in all_rules:
        table.add_row(r.code, r.id, r.language, r.severity, r.fix.applicability if r.fix else "-",
                      "yes" if r.enabled else "opt-in", r.summary)
    Console().print(table)


@main.command()
@click.argument("code")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
def explain(code, config_path):
    """Show the documentation of a rule (by code or id)."""
    from .rulebook.docs import rule_markdown

    settings = _settings({"config_path": config_path})
    engine = _engine(settings)
    rule = engine.rule_by_code(code.upper()) or engine.rule_by_code(code)
    if rule is None:
        _fail(f"no rule {code!r} (see `cuda2hip rules --all`)")
    click.echo(rule_markdown(rule))


@main.command()
@click.option("--tables", "tables_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="HIPIFY's docs/tables directory: also check every row of the reference tables.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@common_options
def coverage(tables_dir, fmt, **opts):
    """Account for every CUDA name of the API tables: renamed, kept, or flagged with a reason
    (under --target-rocm / --experimental / --roc). Exit 1 if anything is unaccounted for."""
    import json

    from .coverage import account, render_text

    settings = _settings(opts)
    engine = _engine(settings)
    result = account(engine, tables_dir)
    if fmt == "json":
        click.echo(json.dumps([c.to_dict() for c in result], indent=2))
    else:
        click.echo(render_text(result, settings), nl=False)
    sys.exit(EXIT_OK if result and all(c.complete for c in result) else EXIT_FINDINGS)


@main.command("test-rules")
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--select", help="Only these codes / prefixes / ids.")
@click.option("-v", "--verbose", is_flag=True, help="List every case, not only failures.")
def test_rules(directory, select, verbose):
    """Run the test cases of every rule (of DIRECTORY, default: the built-in rules and those of
    the configuration)."""
    from .rulebook.loader import RuleError, RuleSource, load_rules
    from .rulebook.selection import selector_matches, split_codes
    from .testing import run_rule_tests

    try:
        if directory is not None:
            loaded = load_rules([RuleSource(directory, builtin=False)], use_cache=False)
        else:
            settings = _settings({})
            from .match.engine import load_all_rules

            loaded = load_all_rules(settings)
    except RuleError as exc:
        _fail(str(exc))
    selectors = split_codes(select)
    chosen = [r for r in loaded if not selectors or any(selector_matches(s, r) for s in selectors)]
    failures = 0
    total = 0
    for rule in sorted(chosen, key=lambda r: r.code):
        for res in run_rule_tests(rule, pool=loaded):
            total += 1
            if not res.ok:
                failures += 1
                click.echo(f"FAIL {res.name} ({rule.id}): {res.detail}")
            elif verbose:
                click.echo(f"ok   {res.name}")
        if not rule.tests.valid and not rule.tests.invalid:
            failures += 1
            click.echo(f"FAIL {rule.code} ({rule.id}): the rule has no test cases")
    click.echo(f"{total - failures} passed, {failures} failed ({len(chosen)} rules)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_OK)


def entry() -> None:
    """The `cuda2hip` command: `main`, then exit without tearing the interpreter down. Freeing
    the name tables and syntax trees at exit costs ~10 ms, which pre-commit pays on every call;
    all output is flushed, files are closed and written atomically before this point."""
    import os

    try:
        main()
        code = EXIT_OK
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            click.echo(exc.code, err=True)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`), a closed stream
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
