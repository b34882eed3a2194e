"""Load and validate rule files.

Parsing a few dozen YAML files costs more than a pre-commit run may spend, so validated rules
are kept in the store (store.py) as msgpack, keyed by every rule file's path and content
(content_keys.py) and the code; a warm start reads one value and never imports PyYAML. It is
derived data that cannot go stale, so it is used whether or not the result cache is on. The
rules' own test cases (a third of the data) are kept apart: only `test-rules` reads them.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import msgspec

from .. import __version__
from .schema import Rule, RuleTests

SCHEMA_VERSION = "6"


class RuleError(Exception):
    """A rule file that is not valid; the message names the file, the rule and the field."""


@lru_cache(maxsize=1)
def builtin_rules_dir() -> Path:
    """The top-level rules/ folder of a source checkout (editable installs, worktrees), else the
    copy installed inside the package (found once per process: the code does not move under it)."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "rules" / "__init__.py").is_file() and (checkout / "pyproject.toml").is_file():
        return checkout / "rules"
    installed = Path(__file__).resolve().parents[1] / "builtin_rules"
    if (installed / "__init__.py").is_file():  # a regular install: no importlib.resources needed
        return installed
    from importlib.resources import files

    return Path(str(files("cuda2hip.builtin_rules")))


def rule_files(directory: Path, data: list[str] | None = None) -> list[Path]:
    """The rule files under `directory` (os.walk: a third of what Path.rglob costs, which every
    run pays). `data/` folders hold tables that rules reference (JSON or YAML), not rules; the
    paths of those and of every other file that is no rule are added to `data`, if given."""
    out = []
    for top, dirs, files in os.walk(directory):
        if "data" in os.path.relpath(top, directory).split(os.sep):  # walked only when `data` is wanted
            data.extend(os.path.join(top, name) for name in files)
            continue
        if data is None:
            dirs[:] = [d for d in dirs if d != "data"]
        else:
            data.extend(os.path.join(top, name) for name in files if not name.endswith(".yaml"))
        out.extend(path for path in (os.path.join(top, name) for name in files if name.endswith(".yaml"))
                   if os.path.isfile(path))
    # Path order (by components) without comparing Path objects (~400 comparisons)
    return [Path(p) for p in sorted(out, key=lambda p: p.split(os.sep))]


def _load_yaml(path: Path):
    from .bounded_yaml import load_bounded

    return load_bounded(path)


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


def family_of(path: Path, directory: Path) -> str:
    """The family of the rule file `path` of the rules folder `directory`: the folder it sits in
    directly under `directory` ("" for a rule at the top of it)."""
    parts = Path(os.path.relpath(path, directory)).parts
    return parts[0] if len(parts) > 1 else ""


def load_rule_file(path: Path, *, builtin: bool = False, family: str = "") -> Rule:
    try:
        raw = _load_yaml(path)
    except OSError as exc:
        raise RuleError(f"{path}: cannot read rule file: {exc.strerror or exc}") from None
    except ValueError as exc:  # YamlLimitError: refused before anything reads the document
        raise RuleError(f"{path}: {exc}") from None
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
    rule.family = family
    return rule


# Rules read from the cache in this process, by fingerprint (the engine and the rules that
# look at other rules, e.g. unknown-cuda-header, read the same files).
_LOADED: dict[str, list[Rule]] = {}
# The built-in rules do not change under a running process: (rules, fingerprint) by the cache
# directory and theirs, so that a second load costs no walk of the files and no fingerprint
# (~9 M instructions of a single-file check). User rules are looked at every time.
_BUILTIN: dict[tuple[str, ...], tuple[list[Rule], str]] = {}


class RuleSource(msgspec.Struct):
    directory: Path
    builtin: bool


def _fingerprint(files: list[tuple[Path, bool, Path]], data: list[str]) -> str:
    """The key of the rule caches: the rule files' names, content and built-in flags, and the
    content of the data files beside them (`data`, sorted here): the words a rule is pre-filtered
    by can come from its tables (struct-fields.json, calls.json, ...), so new data must not meet
    the pre-filter data of the old."""
    from ..cache.keys import fingerprint

    flags = "".join("b" if builtin else "u" for _, builtin, _ in files)
    return fingerprint(f"{SCHEMA_VERSION}:{__version__}:{flags}:{len(files)}",
                       [str(p) for p, _, _ in files] + sorted(data))


def _installed_key(sources: list[RuleSource]) -> str | None:
    """The key of built-in rules that a regular install holds (store.installed), else None."""
    from ..cache import store

    identity = store.installed()
    package = Path(__file__).resolve().parents[1]
    if identity is None or not all(package in src.directory.resolve().parents for src in sources):
        return None
    from ..cache.digest import blake2b

    text = "\0".join([SCHEMA_VERSION, identity, *(str(src.directory) for src in sources)])
    return "installed-" + blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def load_rules(sources: list[RuleSource], *, use_cache: bool = True, tests: bool = False) -> list[Rule]:
    """All rules of the given directories, validated; duplicate codes or ids are an error.
    `tests`: with the rules' test cases (read from the store only when asked for)."""
    return load_rules_keyed(sources, use_cache=use_cache, tests=tests)[0]


def load_rules_keyed(sources: list[RuleSource], *, use_cache: bool = True,
                     tests: bool = False) -> tuple[list[Rule], str | None]:
    """`load_rules`, plus the fingerprint of the rule files that keys the rule data in the store
    (None without the store)."""
    rules, key = _load_rules_keyed(sources, use_cache)
    if tests and key in _WITHOUT_TESTS:
        _attach_tests(rules, key, sources)
    return rules, key


# Fingerprints of rules read from the store, whose test cases are not loaded yet.
_WITHOUT_TESTS: set[str] = set()
_NO_TESTS = RuleTests()


def _attach_tests(rules: list[Rule], key: str, sources: list[RuleSource]) -> None:
    from ..cache import store

    stored = store.get(store.key("rule-tests", key))
    try:
        cases = msgspec.msgpack.decode(stored, type=list[RuleTests]) if stored is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError):
        cases = None
    if cases is None or len(cases) != len(rules):  # not in the store: from the files
        files = [(p, src.builtin, src.directory) for src in sources for p in rule_files(src.directory, [])]
        by_code = {r.code: r.tests for r in (load_rule_file(p, builtin=b, family=family_of(p, d)) for p, b, d in files)}
        cases = [by_code.get(r.code, _NO_TESTS) for r in rules]
    for rule, case in zip(rules, cases):
        rule.tests = case
    _WITHOUT_TESTS.discard(key)


def _load_rules_keyed(sources: list[RuleSource], use_cache: bool) -> tuple[list[Rule], str | None]:
    from ..cache import store

    cache_root = store.location() if use_cache else None
    builtin = None
    if cache_root is not None and all(src.builtin for src in sources):
        builtin = (str(cache_root), *(str(src.directory) for src in sources))
        if builtin in _BUILTIN:
            return _BUILTIN[builtin]
    files: list[tuple[Path, bool, Path]] = []
    data: list[str] = []
    # The built-in rules of a regular install change only with the install: keyed by it, they
    # are found in the store without a walk of their files (store.installed).
    key = _installed_key(sources) if builtin is not None else None
    if key is None:
        for src in sources:
            if not src.directory.is_dir():
                raise RuleError(f"{src.directory}: rule directory does not exist")
            files.extend((p, src.builtin, src.directory) for p in rule_files(src.directory, data))

    stored = None
    if cache_root is not None:
        try:
            key = key or _fingerprint(files, data)
            if key not in _LOADED:
                stored = store.get(store.key("rules", key))
                if stored is not None:
                    _LOADED[key] = msgspec.msgpack.decode(stored, type=list[Rule])
                    _WITHOUT_TESTS.add(key)
            if key in _LOADED:
                if builtin is not None:
                    _BUILTIN[builtin] = (_LOADED[key], key)
                return _LOADED[key], key
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            pass

    if not files:  # (keyed by the install and not in the store yet)
        for src in sources:
            files.extend((p, src.builtin, src.directory) for p in rule_files(src.directory, data))
    rules = [load_rule_file(p, builtin=b, family=family_of(p, d)) for p, b, d in files]
    check_unique(rules)

    if key is not None:
        store.put(store.key("rules", key),
                  msgspec.msgpack.encode([msgspec.structs.replace(r, tests=_NO_TESTS) for r in rules]))
        store.put(store.key("rule-tests", key), msgspec.msgpack.encode([r.tests for r in rules]))
    if key is not None:  # as if read from the cache file: the next load in this process is free
        _LOADED[key] = rules
        if builtin is not None:
            _BUILTIN[builtin] = (rules, key)
    return rules, key


# Pre-filter data of compiled rules (the identifiers a file must hold for a rule to match at
# all), cached beside the validated rules: a run then compiles only the rules whose words occur
# in its files. What a rule's words are follows from its YAML (the fingerprint) and from the code
# that derives them (patterns, rule objects, predicates declaring callees / requires).
Prefilter = tuple[tuple[str, ...], tuple[tuple[str, ...], ...] | None]  # (literals, alternatives)


# Pre-filter data read from the store in this process, by fingerprint.
_PREFILTERS_READ: dict[str, dict] = {}


def read_prefilters(key: str) -> dict[str, Prefilter]:
    """Rule id -> pre-filter data, for the rules of fingerprint `key` compiled before (the store's
    key covers the code that derives the words)."""
    from ..cache import store

    got = _PREFILTERS_READ.get(key)
    if got is None:
        stored = store.get(store.key("prefilters", key))
        if stored is None:
            return {}
        try:
            got = _PREFILTERS_READ[key] = msgspec.msgpack.decode(stored, type=dict[str, Prefilter])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
    return dict(got)  # a copy: engines add to theirs


def write_prefilters(key: str, prefilters: dict[str, Prefilter]) -> None:
    from ..cache import store

    _PREFILTERS_READ[key] = dict(prefilters)
    store.put(store.key("prefilters", key), msgspec.msgpack.encode(prefilters))


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
