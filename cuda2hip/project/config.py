"""Configuration: `[tool.cuda2hip]` in pyproject.toml, or the top level of cuda2hip.toml.

The nearest such file from the current directory upwards is used (or `--config FILE`); relative
paths in it (rule directories, excludes, per-file-ignores) are relative to its directory.
Discovery stops at the repository root (a folder holding `.git`, `.hg` or `.svn`): what lies
above is not the project's. A file found in a folder of another user or one others can write
(/tmp), or that others can write itself, is not read (with a warning: `--config` names it);
`rule-dirs` must lie inside the project (the repository, else the configuration's folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from ..rocm_releases import invalid, listing
from ..rulebook.schema import SeverityName
from ..settings import DEFAULT_FILE_TYPES, DEFAULT_TARGET_ROCM, Settings
from ..system.trust import untrusted


class ConfigError(Exception):
    pass


class BuildConfig(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    """`[tool.cuda2hip.build]`: settings of the build-file rules."""

    offload_arch: str | list[str] = []


class PythonConfig(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    """`[tool.cuda2hip.lang.python]`: the Python frontend has no settings yet; the table is accepted
    (empty) so that a misspelt key is an error rather than silently ignored."""


class ConfigFile(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    select: list[str] | None = None
    extend_select: list[str] = []
    ignore: list[str] = []
    per_file_ignores: dict[str, list[str]] = {}
    exclude: list[str] = []
    extend_exclude: list[str] = []
    respect_gitignore: bool = True
    force_exclude: bool = False
    follow_includes: bool = False
    rule_dirs: list[str] = []
    rule_options: dict[str, dict[str, Any]] = {}
    file_types: dict[str, list[str]] = {}
    fail_on: SeverityName | None = None
    unsafe_fixes: bool = False
    # (a float or an int too, only to say how to write it: `target-rocm = 7.2` is a TOML float)
    target_rocm: str | float | int | None = None
    experimental: bool = False
    library_profile: Literal["hip", "roc"] = "hip"
    kernel_launch: Literal["keep", "hip"] = "keep"
    jobs: Annotated[int, msgspec.Meta(ge=1)] | None = None
    cache: bool = True
    markdown_limit: Annotated[int, msgspec.Meta(ge=0)] = 65536
    # tables of frontends and rule families
    python: PythonConfig = msgspec.field(default_factory=PythonConfig)
    build: BuildConfig = msgspec.field(default_factory=BuildConfig)


VCS_MARKERS = (".git", ".hg", ".svn")


def find_config(start: Path) -> Path | None:
    """The nearest cuda2hip.toml, or pyproject.toml with a [tool.cuda2hip] table, up to the
    repository root, that its owner alone can write (see the module docstring). A
    pyproject.toml that cannot be read is an error: whether it configures cuda2hip (excludes
    that keep vendored code untouched, say) cannot be known, so it is never skipped."""
    start = start.resolve()
    for d in (start, *start.parents):
        for name in ("cuda2hip.toml", "pyproject.toml"):
            candidate = d / name
            if not candidate.is_file():
                continue
            folder_why = untrusted(d, own_group=True)
            why = folder_why or untrusted(candidate, own_group=True)
            if why is not None:
                what = f"its folder {d}" if folder_why else "the file"
                _warn(f"not reading {candidate}: {what}: {why}; name it with --config to use it")
                continue
            if name == "cuda2hip.toml" or "cuda2hip" in _load_toml(candidate).get("tool", {}):
                return candidate
        if any(os.path.lexists(d / marker) for marker in VCS_MARKERS):
            return None  # the repository root: nothing above is the project's
    return None


def project_root(config_dir: Path) -> Path:
    """The project a configuration belongs to: its repository, else its own folder."""
    for d in (config_dir, *config_dir.parents):
        if any(os.path.lexists(d / marker) for marker in VCS_MARKERS):
            return d
    return config_dir


def _warn(text: str) -> None:
    import sys

    print(f"cuda2hip: warning: {text}", file=sys.stderr)


def _load_toml(path: Path) -> dict:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte offset {exc.start}); "
                          "TOML files are UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:  # its message ends with "(at line L, column C)"
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def read_config(path: Path) -> ConfigFile:
    data = _load_toml(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("cuda2hip", {})
    try:
        return msgspec.convert(data, ConfigFile)
    except msgspec.ValidationError as exc:
        text = str(exc)
        where = ""
        if " - at `$." in text:
            text, where = text.split(" - at `$.", 1)
            where = f" (at `{where.rstrip('`')}`)"
        section = "[tool.cuda2hip]" if path.name == "pyproject.toml" else "configuration"
        raise ConfigError(f"{path}: {section}: {text}{where}") from None


def build_settings(config_path: Path | None, *, isolated: bool = False, cwd: Path | None = None) -> Settings:
    cwd = cwd or Path.cwd()
    if isolated:
        return Settings(root=cwd)
    path = config_path or find_config(cwd)
    if path is None:
        return Settings(root=cwd)
    cfg = read_config(path)
    root = path.resolve().parent
    file_types = dict(DEFAULT_FILE_TYPES)
    for lang, patterns in cfg.file_types.items():
        if lang not in DEFAULT_FILE_TYPES:
            raise ConfigError(f"{path}: file-types: unknown language {lang!r} "
                              f"(one of {', '.join(DEFAULT_FILE_TYPES)})")
        file_types[lang] = tuple(patterns)
    rule_dirs = []
    project = project_root(root)
    for d in cfg.rule_dirs:
        p = (root / d).resolve()
        if p != project and project not in p.parents:
            raise ConfigError(f"{path}: rule-dirs: {d!r} ({p}) is outside the project ({project}); "
                              "rules are read only from inside it")
        if not p.is_dir():
            raise ConfigError(f"{path}: rule-dirs: {d!r} is not a directory")
        rule_dirs.append(p)
    if cfg.target_rocm is not None:
        _check_release(path, cfg.target_rocm)
    return Settings(
        root=root,
        config_path=path,
        select=tuple(cfg.select) if cfg.select is not None else None,
        extend_select=tuple(cfg.extend_select),
        ignore=tuple(cfg.ignore),
        per_file_ignores={k: tuple(v) for k, v in cfg.per_file_ignores.items()},
        exclude=tuple(cfg.exclude),
        extend_exclude=tuple(cfg.extend_exclude),
        respect_gitignore=cfg.respect_gitignore,
        force_exclude=cfg.force_exclude,
        follow_includes=cfg.follow_includes,
        rule_dirs=tuple(rule_dirs),
        rule_options={k: dict(v) for k, v in cfg.rule_options.items()},
        file_types=file_types,
        fail_on=cfg.fail_on or "warning",
        unsafe_fixes=cfg.unsafe_fixes,
        target_rocm=cfg.target_rocm if cfg.target_rocm is not None else DEFAULT_TARGET_ROCM,
        experimental=cfg.experimental,
        library_profile=cfg.library_profile,
        kernel_launch=cfg.kernel_launch,
        jobs=cfg.jobs,
        use_cache=cfg.cache,
        markdown_limit=cfg.markdown_limit,
        extra={"python": msgspec.structs.asdict(cfg.python),
               "build": {"offload-arch": cfg.build.offload_arch} if cfg.build.offload_arch else {}},
    )


def _check_release(path, value: str | float | int) -> None:
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        quoted = f'"{value}"'
        raise ConfigError(f"{path}: target-rocm: {value!r} is a number; write the release as a string, "
                          f"target-rocm = {quoted} (one of {listing()})")
    why = invalid(value)
    if why:
        raise ConfigError(f"{path}: target-rocm: {why}")
