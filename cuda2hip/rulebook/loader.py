"""Load and validate rule files.

Parsing a few dozen YAML files costs more than a pre-commit run may spend, so validated rules
are cached as msgpack keyed by every rule file's path, size and mtime (and the schema version);
a warm start reads one small file and never imports PyYAML.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import msgspec

from .. import __version__
from ..digest import blake2b
from .schema import Rule

SCHEMA_VERSION = "3"


class RuleError(Exception):
    """A rule file that is not valid; the message names the file, the rule and the field."""


def builtin_rules_dir() -> Path:
    """The top-level rules/ folder of a source checkout (editable installs, worktrees), else the
    copy installed inside the package."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "rules" / "__init__.py").is_file() and (checkout / "pyproject.toml").is_file():
        return checkout / "rules"
    installed = Path(__file__).resolve().parents[1] / "builtin_rules"
    if (installed / "__init__.py").is_file():  # a regular install: no importlib.resources needed
        return installed
    from importlib.resources import files

    return Path(str(files("cuda2hip.builtin_rules")))


def cache_dir() -> Path | None:
    """Where cuda2hip keeps its caches (rules, per-file results)."""
    base = os.environ.get("CUDA2HIP_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "cuda2hip" if xdg else Path.home() / ".cache" / "cuda2hip"


def rule_files(directory: Path) -> list[Path]:
    # `data/` folders hold tables that rules reference (JSON or YAML), not rules.
    return sorted(p for p in directory.rglob("*.yaml")
                  if p.is_file() and "data" not in p.relative_to(directory).parts[:-1])


def _load_yaml(path: Path):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, "rb") as fh:
        return yaml.load(fh, Loader=loader)


def _describe_error(path: Path, raw, exc: msgspec.ValidationError) -> str:
    code = raw.get("code") if isinstance(raw, dict) else None
    rid = raw.get("id") if isinstance(raw, dict) else None
    who = " ".join(str(x) for x in (code, f"({rid})" if rid else None) if x) or "<no code/id>"
    text = str(exc)
    where = ""
    if " - at `$." in text:
        text, where = text.split(" - at `$.", 1)
        where = where.rstrip("`")
    field_part = f"field `{where}`: " if where else ""
    return f"{path}: rule {who}: {field_part}{text}"


def load_rule_file(path: Path, *, builtin: bool = False) -> Rule:
    try:
        raw = _load_yaml(path)
    except OSError as exc:
        raise RuleError(f"{path}: cannot read rule file: {exc.strerror or exc}") from None
    except Exception as exc:  # yaml.YAMLError and friends
        raise RuleError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise RuleError(f"{path}: a rule file must hold one mapping (code, id, kind, ...)")
    try:
        rule = msgspec.convert(raw, Rule)
    except msgspec.ValidationError as exc:
        raise RuleError(_describe_error(path, raw, exc)) from None
    rule.source_path = str(path)
    rule.builtin = builtin
    return rule


@dataclass
class RuleSource:
    directory: Path
    builtin: bool


def _fingerprint(files: list[tuple[Path, bool]]) -> str:
    h = blake2b(f"{SCHEMA_VERSION}:{__version__}".encode())
    for path, builtin in files:
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{builtin}\n".encode())
    return h.hexdigest()[:32]


def load_rules(sources: list[RuleSource], *, use_cache: bool = True) -> list[Rule]:
    """All rules of the given directories, validated; duplicate codes or ids are an error."""
    files: list[tuple[Path, bool]] = []
    for src in sources:
        if not src.directory.is_dir():
            raise RuleError(f"{src.directory}: rule directory does not exist")
        files.extend((p, src.builtin) for p in rule_files(src.directory))

    cache_file = None
    cache_root = cache_dir() if use_cache else None
    if cache_root is not None:
        try:
            cache_file = cache_root / f"rules-{_fingerprint(files)}.msgpack"
            if cache_file.is_file():
                return msgspec.msgpack.decode(cache_file.read_bytes(), type=list[Rule])
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            pass

    rules = [load_rule_file(p, builtin=b) for p, b in files]
    check_unique(rules)

    if cache_file is not None:
        write_cache_file(cache_file, msgspec.msgpack.encode(rules))
    return rules


def check_unique(rules: list[Rule]) -> None:
    by_code: dict[str, Rule] = {}
    by_id: dict[str, Rule] = {}
    for r in rules:
        if r.code in by_code:
            raise RuleError(f"{r.source_path}: rule {r.code} ({r.id}): field `code`: "
                            f"already used by {by_code[r.code].source_path}")
        if r.id in by_id:
            raise RuleError(f"{r.source_path}: rule {r.code} ({r.id}): field `id`: "
                            f"already used by {by_id[r.id].source_path}")
        by_code[r.code] = r
        by_id[r.id] = r


def write_cache_file(path: Path, payload: bytes) -> None:
    """Write a file of the cache directory atomically; best effort (an unwritable cache only
    costs speed)."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    except OSError:
        pass
