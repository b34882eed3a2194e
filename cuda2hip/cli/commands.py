"""Command line: `cuda2hip check|fix|rules|explain|coverage|test-rules`.

Exit codes: 0 nothing at or above --fail-on (or --exit-zero); 1 findings (or, with --diff,
changes); 2 usage, configuration, rule or I/O error.

`check` and `fix` are implemented here; the click commands (cli_commands.py) are built from the
option table in cli_options.py, which also parses a plain `check` / `fix` call without importing
click (pre-commit runs one per commit: see `main`).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

# Start-up (imports, rules, name tables) allocates tens of thousands of objects that all stay
# alive: with the default first-generation threshold (700) the collector runs ~50 times during a
# pre-commit call and frees next to nothing, ~6 ms of ~110. Garbage cycles are still collected.
gc.set_threshold(100_000, 10, 10)

from .options import CORE_FORMATS  # noqa: E402

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
# `fix --report FILE`: the report format follows the file name.
REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                   ".json": "json", ".sarif": "sarif", ".csv": "api-csv"}


def _formats() -> list[str]:
    from ..report import FORMATS

    return list(FORMATS)


class UsageFailure(Exception):
    """A usage or configuration error: `cuda2hip: error: MESSAGE`, exit 2 (click's own usage
    errors exit 2 too)."""

    exit_code = EXIT_ERROR


def _fail(message: str):
    raise UsageFailure(message)


def echo(text: str | bytes, nl: bool = True, err: bool = False) -> None:
    """click.echo for the text this module prints (no styles to strip: colour is only used on a
    terminal), without importing click; bytes (a diff, a migrated file) go out as they are.
    Output that cannot be written (a full disk, a closed pipe) ends the command: one error
    line, exit 2."""
    global _OUTPUT_FAILED
    stream = sys.stderr if err else sys.stdout
    if not isinstance(text, bytes):
        text = (text + "\n" if nl else text).encode(stream.encoding or "utf-8", "backslashreplace")
    elif nl:
        text += b"\n"
    try:
        stream.flush()
        out = getattr(stream, "buffer", None)
        if out is None:  # a text stream only (a caller's StringIO)
            stream.write(text.decode(getattr(stream, "encoding", None) or "utf-8", "replace"))
            stream.flush()
            return
        # Bytes, in a loop: an unbuffered stream (PYTHONUNBUFFERED) may take part of them and
        # report no error when its reader goes away (a closed pipe), and the text layer would
        # drop the rest silently.
        view = memoryview(text)
        while view:
            written = out.write(view)
            if written is None:  # a non-blocking descriptor that is full: wait until it takes more
                import select

                select.select([], [out], [])
                continue
            view = view[written:]
        out.flush()
    except OSError as exc:
        _OUTPUT_FAILED = True
        raise UsageFailure(f"cannot write to standard {'error' if err else 'output'}: {exc.strerror or exc}") from None


# Set once writing to the terminal (or the pipe, or the file it is redirected to) failed: the
# error is said once and nothing more is written there.
_OUTPUT_FAILED = False


def _settings(opts: dict, cwd: Path | None = None):
    """The settings of a run in `cwd` (default: the working directory) with options `opts`."""
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
    return settings


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


def _run(paths, settings, mode, engine):
    from ..engine.compiled import RuleCompileError
    from ..pipeline import run

    try:
        return run(list(paths) or ["."], settings, mode, engine)
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


INTERRUPTED = "cuda2hip: interrupted; every file written is complete, the others are untouched"


def interrupted(exc: KeyboardInterrupt | None = None):
    """End a command a Ctrl-C (or SIGTERM, SIGHUP: signals.py) stopped, with the shell's status
    for the signal (the writes are atomic: what the message says holds at any point)."""
    from ..system.signals import signal_of

    signum = signal_of(exc) if exc is not None else 2
    if signum == 2:
        echo(INTERRUPTED, err=True)
    else:
        echo(INTERRUPTED.replace("interrupted", f"terminated by {exc}"), err=True)
    sys.exit(128 + signum)


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


def check(paths, fmt, output, statistics, baseline, write_baseline, **opts):
    """Report findings in PATHS (files or directories; default: the current directory)."""
    from ..pipeline import Mode

    if fmt not in _formats():
        _fail(f"--format: {fmt!r} is not one of {', '.join(_formats())}")
    view = _view(opts)
    settings = _settings(opts)
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
    engine = _engine(settings)
    run = _run(paths, settings, Mode.CHECK, engine)
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


def fix(paths, unsafe_fixes, diff, to_stdout, fmt, output, report_file, output_dir, rename, statistics, **opts):
    """Apply fixes to PATHS in place (safe ones; unsafe ones with --unsafe-fixes), then report
    what remains. With --output-dir OUT SRC, write the migrated tree to OUT instead."""
    from ..pipeline import Mode

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
    settings = _settings(opts)
    _check_output_path(output, "--output")
    _check_output_path(report_file, "--report")
    engine = _engine(settings)
    if to_stdout:
        if len(paths) != 1 or not Path(paths[0]).is_file():
            _fail("--stdout takes exactly one file")
    if tree:
        run = _run_tree(paths[0], output_dir, rename, settings, engine, quiet=view["quiet"])
    else:
        run = _run(paths, settings, Mode.PREVIEW if (diff or to_stdout) else Mode.FIX, engine)
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


COMMANDS = {"check": check, "fix": fix}


def main(args: list[str] | None = None) -> None:
    """Run the command line `args` (default: sys.argv[1:]); ends with SystemExit (or the
    KeyboardInterrupt of a Ctrl-C, which `entry` reports). A plain
    `check` / `fix` call is parsed from the option table; anything else (other commands, help,
    usage errors) goes through click."""
    argv = sys.argv[1:] if args is None else list(args)
    if args is None:  # the command's own process (not a test calling main)
        from ..system.signals import install

        install()
    from .options import parse

    try:
        parsed = parse(argv)
        if parsed is None:
            from .group import group

            group.main(args=argv, prog_name="cuda2hip")
        else:
            command, paths, values = parsed
            COMMANDS[command](paths, **values)
    except UsageFailure as exc:
        try:
            echo(f"cuda2hip: error: {exc}", err=True)
        except UsageFailure:  # standard error is gone too
            pass
        sys.exit(exc.exit_code)
    sys.exit(EXIT_OK)


def entry() -> None:
    """The `cuda2hip` command: `main`, then exit without tearing the interpreter down. Freeing
    the name tables and syntax trees at exit costs ~10 ms, which pre-commit pays on every call;
    all output is flushed, files are closed and written atomically before this point.
    A Ctrl-C at any point of `main` ends it with EXIT_INTERRUPTED and says so."""
    import os

    try:
        main()
        code = EXIT_OK
    except KeyboardInterrupt as exc:
        try:
            interrupted(exc)
        except SystemExit as done:
            code = done.code
        except UsageFailure:  # standard error is gone
            code = EXIT_INTERRUPTED
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            echo(str(exc.code), err=True)
            code = 1
    try:  # what a command that made no run (rules, explain) put in the store
        from ..cache import store

        store.flush()
    except KeyboardInterrupt:
        pass
    for stream in (sys.stdout, sys.stderr):
        if _OUTPUT_FAILED:
            break  # said once; what is left in the buffers cannot be written either
        try:
            stream.flush()
        except (OSError, ValueError) as exc:  # a closed pipe (`| head`), a closed stream
            if stream is sys.stdout:
                try:
                    sys.stderr.write(f"cuda2hip: error: cannot write to standard output: "
                                     f"{getattr(exc, 'strerror', None) or exc}\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
                code = EXIT_ERROR
        except KeyboardInterrupt:  # while the output drains into a slow pipe: it is all written
            code = EXIT_INTERRUPTED
    os._exit(code)


if __name__ == "__main__":
    entry()
