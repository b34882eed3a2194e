"""The command line, parsed by click: the group and its commands, `check` and `fix` (their options
from options.py, what they do in commands.py), `rules`, `explain`, `coverage`, `test-rules`,
`lsp`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__, rocm_releases
from .commands import _engine, _settings
from .commands import check as check_files
from .commands import fix as fix_files
from .options import CHECK, COMMON, FIX, LSP, Option
from .output import EXIT_FINDINGS, EXIT_OK, UsageFailure, interrupted
from .output import fail as _fail


def _click_option(o: Option):
    kw: dict = {"help": o.help}
    if o.kind == "flag":
        kw.update(is_flag=True, default=o.default)
    elif o.kind == "flag_value":
        kw.update(flag_value=o.flag_value, default=None)
    else:
        if o.multiple:
            kw["multiple"] = True
        else:
            kw["default"] = o.default
        if o.show_default:
            kw["show_default"] = True
        if o.metavar:
            kw["metavar"] = o.metavar
        if o.kind == "choice":
            kw["type"] = click.Choice(list(o.choices))
        elif o.kind == "int":
            kw["type"] = click.IntRange(min=o.minimum)
        elif o.kind == "path":
            kw["type"] = click.Path(file_okay=o.file_okay, dir_okay=o.dir_okay, path_type=Path)
    return click.option(*o.decls, o.dest, **kw)


def options(spec: tuple[Option, ...]):
    """The options of `spec` as click decorators, in their order in --help."""
    def apply(fn):
        for o in reversed(spec):
            fn = _click_option(o)(fn)
        return fn

    return apply


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             help="Migrate CUDA sources to HIP: lint for CUDA-only code and AMD portability hazards, and "
                  "rewrite what can be rewritten safely.\n\nThe target is ROCm "
                  f"{rocm_releases.DEFAULT} unless --target-rocm (or `target-rocm` in the configuration) "
                  f"names another of the audited releases: {rocm_releases.listing()}.")
@click.version_option(__version__, prog_name="cuda2hip")
def group() -> None:
    pass


@group.command("check", help=check_files.__doc__)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@options(CHECK)
def check(paths, **values):
    try:  # (click would end a Ctrl-C with "Aborted!" and exit status 1)
        check_files(paths, **values)
    except KeyboardInterrupt as exc:
        interrupted(exc)


@group.command("fix", help=fix_files.__doc__)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@options(FIX)
def fix(paths, **values):
    try:  # (click would end a Ctrl-C with "Aborted!" and exit status 1)
        fix_files(paths, **values)
    except KeyboardInterrupt as exc:
        interrupted(exc)


@group.command()
@click.option("--all", "show_all", is_flag=True, help="List opt-in rules as well as the default ones (they are marked).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--json-schema", is_flag=True, help="Print the JSON schema of a rule file.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
def rules(show_all, fmt, json_schema, config_path):
    """List the rules."""
    import json

    if json_schema:
        from ..rulebook.schema import rule_json_schema

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


@group.command()
@click.argument("code")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
def explain(code, config_path):
    """Show the documentation of a rule (by code or id)."""
    from ..rulebook.docs import rule_markdown

    settings = _settings({"config_path": config_path})
    engine = _engine(settings)
    rule = engine.rule_by_code(code.upper()) or engine.rule_by_code(code)
    if rule is None:
        _fail(f"no rule {code!r} (see `cuda2hip rules --all`)")
    click.echo(rule_markdown(rule))


@group.command()
@click.option("--tables", "tables_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="a folder of HIPIFY's API tables (docs/reference/tables; tests/harness/fetch_hipify_tables.py "
                   "fetches them): also check every row of the reference tables.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@options(COMMON)
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


@group.command("test-rules")
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--select", help="Only these codes / prefixes / ids.")
@click.option("-v", "--verbose", is_flag=True, help="List every case, not only failures.")
def test_rules(directory, select, verbose):
    """Run the test cases of every rule (of DIRECTORY, default: the built-in rules and those of
    the configuration)."""
    from ..rulebook.loader import RuleError, RuleSource, load_rules
    from ..rulebook.selection import selector_matches, split_codes
    from ..engine.rule_tests import run_rule_tests

    try:
        if directory is not None:
            from ..rulebook.loader import builtin_rules_dir

            builtin = directory.resolve() == builtin_rules_dir().resolve()
            loaded = load_rules([RuleSource(directory, builtin=builtin)], use_cache=False)
        else:
            settings = _settings({})
            from ..engine.engine import load_all_rules

            loaded = load_all_rules(settings, tests=True)
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


@group.command("lsp")
@options(LSP)
def lsp(baseline, **opts):
    """Serve findings, fixes and rule docs to an editor over the Language Server Protocol (on
    stdin/stdout; the editor starts and ends it). Each file gets the settings `check` would use
    for it: the nearest configuration file, and the options given here. See docs/editors.md."""
    # (Nothing is imported from the working directory, the editor's workspace: launch.py.)
    fixed = bool(opts.get("config_path") or opts.get("isolated"))
    # A bad option (--target-rocm 6.x) ends the command; a configuration file's errors are
    # shown on the files it configures, which the server goes on serving.
    _settings({**opts, "config_path": None, "isolated": True})

    def settings_for(cwd: Path, config: Path | None):
        try:
            return _settings({**opts, "config_path": config or opts.get("config_path")}, cwd=cwd, build=True)
        except UsageFailure as exc:
            raise ValueError(str(exc)) from None

    from ..lsp import serve

    serve(settings_for, fixed=fixed, baseline=baseline)

