"""`check` and `fix`: the options click parsed (group.py) -> the settings, the engine, the run
(pipeline.py, run/tree.py) -> the report and the exit status.

Exit codes: 0 nothing at or above --fail-on (or --exit-zero); 1 findings (or, with --diff,
changes); 2 usage, configuration, rule or I/O error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .output import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, echo
from .output import fail as _fail
from .stdin import stdin_call as _stdin_call, stdin_run as _stdin_run

# `fix --report FILE`: the report format follows the file name.
REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                   ".json": "json", ".sarif": "sarif", ".csv": "api-csv"}


def _formats() -> list[str]:
    from ..report import FORMATS

    return list(FORMATS)


def _settings(opts: dict, cwd: Path | None = None, *, build: bool = False):
    """The settings of a run in `cwd` (default: the working directory) with options `opts`;
    `build`: with what the build says of the files (include directories, -D macros)."""
    from ..project.config import ConfigError, build_settings
    from ..rulebook.selection import split_codes

    try:
        settings = build_settings(opts.get("config_path"), isolated=opts.get("isolated", False), cwd=cwd)
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
        from ..rocm_releases import invalid

        why = invalid(opts["target_rocm"])
        if why:  # (click's choice refuses it first; this guards calls made without click)
            _fail(f"--target-rocm: {why}")
        settings.target_rocm = opts["target_rocm"]
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
    if opts.get("verbose"):
        settings.verbose = True
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
    if opts.get("exclude"):
        settings.exclude = split_codes(opts["exclude"])
    if opts.get("extend_exclude"):
        settings.extend_exclude = settings.extend_exclude + split_codes(opts["extend_exclude"])
    if build:
        _build_facts(settings, opts)
    return settings


def _build_facts(settings, opts: dict) -> None:
    """The include directories (--include-dir, the configuration's, the compilation database's)
    and the -D macros of each file, from the compilation database named or found."""
    import os

    from ..project import compile_commands

    given = [os.path.abspath(d) for d in opts.get("include_dirs") or ()]
    named = opts.get("compile_commands") or settings.compile_commands
    database = Path(named) if named else compile_commands.find(settings.root)
    facts = compile_commands.BuildFacts()
    if database is not None:
        try:
            facts = compile_commands.read(database, settings.root)
        except compile_commands.CompileCommandsError as exc:
            _fail(str(exc))
    dirs = dict.fromkeys([*map(os.path.realpath, given), *settings.include_dirs, *facts.include_dirs])
    settings.include_dirs = tuple(dirs)
    settings.defines = facts.defines


def _settings_tree(opts: dict):
    """The settings of each folder of a run: its nearest configuration (project/config_tree.py), or the
    one --config names, with the command line applied."""
    from ..project.config_tree import SettingsTree

    fixed = opts.get("config_path")
    return SettingsTree(lambda config, folder: _settings({**opts, "config_path": config}, cwd=folder, build=True),
                        fixed=bool(fixed or opts.get("isolated")), config=fixed, fail=_fail)


def _folder_of(path: str) -> Path:
    from ..project.config_tree import folder_of

    return folder_of(path)


def _offload_archs(settings, given) -> None:
    from ..api.arch import OFFLOAD_ARCH, offload_archs

    build = settings.extra.setdefault("build", {})
    if given:
        build["offload-arch"] = [a for g in given for a in g.split(",") if a.strip()]
    for arch in offload_archs(settings):
        if not OFFLOAD_ARCH.match(arch):
            _fail(f"offload-arch: {arch!r} is not an AMD GPU target like gfx942 or gfx90a:xnack+")


def _check_output_path(path: Path | None, option: str) -> None:
    """Fail (exit 2) before any file is read or rewritten when the report file `path` cannot be
    written: a run must not rewrite sources and then crash on its report. A missing folder is
    made only inside the working directory (never, say, /nonexistent/ as root)."""
    if path is None:
        return
    import os
    import tempfile

    target = Path(os.path.abspath(path))
    if target.is_dir():
        _fail(f"{option} {path}: is a directory")
    from ..fix.writeback import report_target

    target, special = report_target(target)
    if special:  # a device or a FIFO: written into as it is
        if not os.access(target, os.W_OK):
            _fail(f"{option} {path}: not writable")
        return
    parent = target.parent
    if not parent.exists():
        cwd = Path.cwd()
        if cwd != parent and cwd not in parent.parents:
            _fail(f"{option} {path}: the directory {parent} does not exist")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _fail(f"{option} {path}: cannot create {parent}: {exc.strerror or exc}")
    elif not parent.is_dir():
        _fail(f"{option} {path}: {parent} is not a directory")
    from ..fix.tempnames import TEMP_SUFFIX
    from ..fix.writeback import temp_prefix

    try:  # the way the report will be written: a temporary file in that folder
        fd, probe = tempfile.mkstemp(dir=parent, prefix=temp_prefix(target.name), suffix=TEMP_SUFFIX)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        _fail(f"{option} {path}: cannot write there: {exc.strerror or exc}")


def _engine(settings):
    from ..engine.compiled import RuleCompileError
    from ..engine.engine import Engine
    from ..rulebook.loader import RuleError
    from ..rulebook.selection import SelectionError

    try:
        engine = Engine(settings)  # rules compile when a file needs them (see run/workers.py)
    except (RuleError, RuleCompileError, SelectionError) as exc:
        _fail(str(exc))
    return engine


def _run(paths, tree, mode):
    """(run, settings and engine of the report) of `paths`, each file with its own settings
    (`tree`: _settings_tree); the report's are those of the first path named."""
    from ..engine.compiled import RuleCompileError
    from ..pipeline import Mode, run_grouped
    from ..project.config_tree import discover_all

    paths = list(paths) or ["."]
    first = tree.settings_for(_folder_of(paths[0]))
    groups, errors = discover_all(paths, tree, writing=mode is Mode.FIX)
    engines: dict[int, object] = {}

    def engine_for(settings):
        if id(settings) not in engines:
            engines[id(settings)] = _engine(settings)
        return engines[id(settings)]

    try:
        return run_grouped(groups, errors, mode, engine_for), first, engine_for(first)
    except RuleCompileError as exc:
        _fail(str(exc))


def _run_tree(src, output_dir, rename, settings, engine, quiet=False):
    from ..engine.compiled import RuleCompileError
    from ..run.tree import TreeError, migrate_tree

    try:
        run, summary = migrate_tree(Path(src), output_dir, settings, engine, rename=rename)
    except (TreeError, RuleCompileError) as exc:
        _fail(str(exc))
    if not quiet:
        echo(summary.line(), err=True)
    return run


def _exit_code(run, settings, view: dict | None = None) -> int:
    from ..findings import Severity

    if run.errors:
        return EXIT_ERROR
    threshold = Severity.parse(settings.fail_on)
    if any(f.severity >= threshold and not f.suppressed for f in run.findings):
        return EXIT_OK if view and view.get("exit_zero") else EXIT_FINDINGS
    return EXIT_OK


def _view(opts: dict) -> dict:
    """The output options (--min-severity, --show-info, --show-fixes, -q, --exit-zero), taken out
    of `opts`: they steer the report and the exit status, never the run."""
    from ..findings import Severity
    from ..report import DEFAULT_MIN_SEVERITY

    lowest = opts.pop("min_severity", None)
    if opts.pop("show_info", False):
        lowest = "hint"
    return {"min_severity": int(Severity.parse(lowest or DEFAULT_MIN_SEVERITY)),
            "fix_details": bool(opts.pop("show_fixes", False)), "quiet": bool(opts.pop("quiet", False)),
            "exit_zero": bool(opts.pop("exit_zero", False))}


def _emit(fmt: str, run, settings, engine, output: Path | None = None, err: bool = False,
          extra: dict | None = None, view: dict | None = None) -> None:
    from ..report import LINE_FORMATS, ReportContext, render

    view = view or {}
    stream = sys.stderr if err else sys.stdout
    color = output is None and stream.isatty()
    ctx = ReportContext(engine=engine, settings=settings, color=color, show_suppressed=settings.show_suppressed,
                        fix_details=view.get("fix_details", False), quiet=view.get("quiet", False),
                        min_severity=view.get("min_severity", 0) if fmt in LINE_FORMATS else 0,
                        extra=extra or {})
    text = render(fmt, run, ctx)
    if output is not None:
        from ..fix.writeback import write_report

        try:
            write_report(output, text.encode("utf-8", "backslashreplace"))
        except OSError as exc:  # checked before the run, so only e.g. a full disk gets here
            _fail(f"cannot write the report to {output}: {exc.strerror or exc}")
    else:
        echo(text, nl=False, err=err)


def _report(fmt: str, run, settings, engine, output: Path | None, statistics: bool, err: bool = False,
            view: dict | None = None) -> None:
    """The report in `fmt` (to `output` or the terminal); with --statistics the counts per rule
    replace it on the terminal (or come beside it when the report goes to a file)."""
    if statistics:
        if output is not None:
            _emit(fmt, run, settings, engine, output, view=view)
        _emit("statistics", run, settings, engine, None, err, extra={"json": fmt == "json"}, view=view)
    else:
        _emit(fmt, run, settings, engine, output, err, view=view)


def check(paths, fmt, output, statistics, baseline, write_baseline, stdin_filename=None, **opts):
    """Report findings in PATHS (files or directories; default: the current directory; `-`:
    standard input, named by --stdin-filename). Each file gets the settings of the nearest
    configuration above it."""
    from ..pipeline import Mode

    if fmt not in _formats():
        _fail(f"--format: {fmt!r} is not one of {', '.join(_formats())}")
    view = _view(opts)
    stdin = _stdin_call(paths, stdin_filename)
    tree = _settings_tree(opts)
    settings = tree.settings_for(_folder_of(stdin or (paths[0] if paths else ".")))
    _check_output_path(output, "--output")
    _check_output_path(write_baseline, "--write-baseline")
    known = None
    if baseline is not None or write_baseline is not None:
        from ..report import baseline as baselines
    if baseline is not None:
        try:
            known = baselines.read(baseline)
        except baselines.BaselineError as exc:
            _fail(str(exc))
    if stdin is not None:
        engine = _engine(settings)
        run = _stdin_run(stdin, settings, engine, Mode.CHECK)[0]
    else:
        run, settings, engine = _run(paths, tree, Mode.CHECK)
    if write_baseline is not None:
        try:
            count = baselines.write(run, settings.root, write_baseline)
        except OSError as exc:
            _fail(f"cannot write the baseline {write_baseline}: {exc.strerror or exc}")
        echo(f"Wrote {count} finding{'s' if count != 1 else ''} to the baseline {write_baseline}.")
        for e in run.errors:
            echo(f"{e.path}: error: {e.reason}", err=True)
        sys.exit(EXIT_ERROR if run.errors else EXIT_OK)
    if known is not None:
        baselines.apply(run, settings.root, known)
    _report(fmt, run, settings, engine, output, statistics, view=view)
    sys.exit(_exit_code(run, settings, view))


def fix(paths, unsafe_fixes, diff, to_stdout, fmt, output, report_file, output_dir, rename, statistics,
        stdin_filename=None, **opts):
    """Apply fixes to PATHS in place (safe ones; unsafe ones with --unsafe-fixes), then report
    what remains. With --output-dir OUT SRC, write the migrated tree to OUT instead. `-`: fix
    standard input (named by --stdin-filename) onto standard output, findings on standard error."""
    from ..pipeline import Mode

    stdin = _stdin_call(paths, stdin_filename)
    if stdin is not None and (output_dir is not None or rename):
        _fail("`-` (standard input) excludes --output-dir and --rename")

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
    view = _view(opts)
    settings_tree = _settings_tree(opts)
    settings = settings_tree.settings_for(_folder_of(stdin or (paths[0] if paths else ".")))
    _check_output_path(output, "--output")
    _check_output_path(report_file, "--report")
    if to_stdout:
        if len(paths) != 1 or not Path(paths[0]).is_file():
            _fail("--stdout takes exactly one file")
    if stdin is not None:
        engine = _engine(settings)
        run, raw = _stdin_run(stdin, settings, engine, Mode.PREVIEW if diff else Mode.FIX)
        if not diff:
            result = run.files[0]
            echo(result.migrated if result.changed else raw, nl=False)
            _emit("concise" if fmt == "text" else fmt, run, settings, engine, output, err=output is None, view=view)
            sys.exit(_exit_code(run, settings, view))
    elif tree:
        engine = _engine(settings)
        run = _run_tree(paths[0], output_dir, rename, settings, engine, quiet=view["quiet"])
    else:
        run, settings, engine = _run(paths, settings_tree, Mode.PREVIEW if (diff or to_stdout) else Mode.FIX)
    if report_fmt is not None:
        _emit(report_fmt, run, settings, engine, report_file, extra={"diffs": True})
    if to_stdout:
        # The named file, whatever else the run took in (--follow-includes adds its headers).
        named = Path(paths[0]).resolve()
        result = next((r for r in run.files if Path(r.path).resolve() == named), None)
        if result is not None and result.error is None:
            echo(result.migrated if result.changed else Path(paths[0]).read_bytes(), nl=False)
        _emit("concise" if fmt == "text" else fmt, run, settings, engine, output, err=output is None, view=view)
        sys.exit(_exit_code(run, settings, view))
    if diff:
        from ..report.diff import unified_diff_bytes

        # Bytes, as `fix` would write them (any encoding, any line-break style).
        text = b"".join(unified_diff_bytes(r.path, r.original, r.migrated) for r in run.files if r.changed)
        echo(text, nl=False)
        _report("concise" if fmt == "text" else fmt, run, settings, engine, output, statistics, err=output is None,
                view=view)
        code = _exit_code(run, settings, view)
        sys.exit(EXIT_ERROR if code == EXIT_ERROR else (EXIT_FINDINGS if text and not view["exit_zero"] else code))
    _report(fmt, run, settings, engine, output, statistics, view=view)
    sys.exit(_exit_code(run, settings, view))
