"""Configuration: `[tool.cuda2hip]` in pyproject.toml, or the top level of cuda2hip.toml.

The nearest such file from the current directory upwards is used (or `--config FILE`); relative
paths in it (rule directories, excludes, per-file-ignores) are relative to its directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from ..rocm_releases import invalid, listing
from ..rulebook.schema import SeverityName
from ..settings import DEFAULT_FILE_TYPES, DEFAULT_TARGET_ROCM, Settings


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


def find_config(start: Path) -> Path | None:
    """The nearest cuda2hip.toml, or pyproject.toml with a [tool.cuda2hip] table. A
    pyproject.toml that cannot be read is an error: whether it configures cuda2hip (excludes
    that keep vendored code untouched, say) cannot be known, so it is never skipped."""
    start = start.resolve()
    for d in (start, *start.parents):
        candidate = d / "cuda2hip.toml"
        if candidate.is_file():
            return candidate
        pyproject = d / "pyproject.toml"
        if pyproject.is_file():
            if "cuda2hip" in _load_toml(pyproject).get("tool", {}):
                return pyproject
    return None


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
    for d in cfg.rule_dirs:
        p = (root / d).resolve()
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
