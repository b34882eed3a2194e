"""Cache of per-file results, so that a second run over an unchanged tree is near-instant.

A result is stored under a key made of the file's path and content hash and a fingerprint of
everything else that decides it: the code (store.key: cuda2hip's and every parser's), every
rule and data file, the settings that change findings or fixes, and the kind of run (check, or
fix with or without unsafe fixes). Any change there gives new keys, so stale results are never
read; entries unused for a while are pruned. What a result also depends on, the local headers
the file includes (transitively) and those its analysis read, is stored with it as (path,
content digest) pairs and checked on every hit (`include_graph.dependencies_hold`): a header
edited, created or removed since makes it a miss.

Every stored value carries a checksum (a damaged value is a miss, reported with --verbose), and
a cached fixed text is used only if re-applying the cached fixes, pass by pass, to the file as
it is now gives exactly that text (`replays`). These catch damage and bugs, not forgery: the
cache is trusted like code, so a cache directory other users can write is not used at all
(store.py, where the results are kept with the rule data). Only the parent process reads and
writes results. The cache is best effort: an unreadable, locked or corrupt store only costs speed.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import msgspec

from ..cache import store
from ..cache.store import seal, unseal
from ..cache.digest import blake2b
from ..findings import Finding, own_paths
from ..settings import Settings
from . import memo as run_scope

# Settings that only steer the walk, the output or the process pool, never one file's result.
NEUTRAL_SETTINGS = frozenset({"jobs", "use_cache", "show_suppressed", "fail_on", "force_exclude",
                              "exclude", "extend_exclude", "respect_gitignore", "config_path", "markdown_limit",
                              "follow_includes", "verbose"})


class Entry(msgspec.Struct, array_like=True):
    """What a file's analysis produced: enough to rebuild its FileResult without parsing."""

    findings: list[Finding]
    fixed: list[Finding] = []
    migrated: bytes | None = None  # fix modes: the fixed text, when it differs
    error: str | None = None  # content-derived refusal (e.g. not C/C++ at all)
    converged: bool = True
    passes: list[int] = []  # fix modes: how many of `fixed` each pass of the fix loop applied
    # include_graph.dependencies of the analysis, paths as bytes (os.fsencode: any file name)
    deps: list[tuple[bytes, bytes]] = []


_ENCODER = msgspec.msgpack.Encoder()


@lru_cache(maxsize=1)
def _decoder() -> "msgspec.msgpack.Decoder[Entry]":
    # Built on first use: a run that only stores results (a file just edited) never decodes.
    return msgspec.msgpack.Decoder(Entry)


def encode_entry(entry: Entry, path: str) -> bytes:
    """The entry of the file `path` encoded. Its findings are all of that file: when its name is
    not UTF-8 (surrogate escapes, which msgpack cannot hold), they go with a stand-in and get the
    name back when decoded (`own_paths`)."""
    try:
        return _ENCODER.encode(entry)
    except UnicodeEncodeError:
        stand_in = os.fsencode(path).decode("utf-8", "backslashreplace")
        copy = msgspec.structs.replace(
            entry, findings=[msgspec.structs.replace(f, path=stand_in) for f in entry.findings],
            fixed=[msgspec.structs.replace(f, path=stand_in) for f in entry.fixed])
        return _ENCODER.encode(copy)


def decode_entry(data: bytes) -> Entry:
    return _decoder().decode(data)


class _EntryHead(msgspec.Struct, array_like=True):
    """An encoded Entry with its fixed findings left encoded (see decode_entry_head)."""

    findings: list[Finding]
    fixed: msgspec.Raw
    migrated: bytes | None = None
    error: str | None = None
    converged: bool = True
    passes: list[int] = []
    deps: list[tuple[bytes, bytes]] = []


@lru_cache(maxsize=1)
def _head_decoder() -> "msgspec.msgpack.Decoder[_EntryHead]":
    return msgspec.msgpack.Decoder(_EntryHead)


def decode_entry_head(data: bytes) -> "_EntryHead":
    """An encoded Entry, but `fixed` stays encoded (msgpack of a list of findings): a run's
    parent often only counts them (decode_findings / count_encoded decode or count them)."""
    return _head_decoder().decode(data)


class _ChangeHead(msgspec.Struct, array_like=True):
    """An encoded Entry read for whether fix changes the file: its findings left encoded."""

    findings: msgspec.Raw
    fixed: msgspec.Raw
    migrated: bytes | None = None
    error: str | None = None
    converged: bool = True
    passes: msgspec.Raw = msgspec.Raw(b"\x90")
    deps: list[tuple[bytes, bytes]] = []


@lru_cache(maxsize=1)
def _change_decoder() -> "msgspec.msgpack.Decoder[_ChangeHead]":
    return msgspec.msgpack.Decoder(_ChangeHead)


def replays(entry: Entry, raw: bytes, path: str) -> bool:
    """Whether the cached fixes, applied pass by pass to `raw` (the file as it is now), give
    exactly the cached fixed text."""
    if entry.migrated is None:
        return not entry.fixed
    from ..fix.apply import apply_fixes
    from ..lang.source import SourceError, SourceText

    if sum(entry.passes) != len(entry.fixed):
        return False
    try:
        source = SourceText.from_bytes(raw, path)
        data = source.data
        start = 0
        for count in entry.passes:
            data = apply_fixes(data, [f.fix for f in entry.fixed[start:start + count]], source.newline)
            start += count
        return source.with_data(data).to_bytes() == entry.migrated
    except (SourceError, ValueError, AttributeError):  # AttributeError: a fixed finding without a fix
        return False


def _paths(deps: list[tuple[bytes, bytes]]) -> list[tuple[str, bytes]]:
    return [(os.fsdecode(p), d) for p, d in deps]


def content_digest(raw: bytes) -> bytes:
    return blake2b(raw, digest_size=16).digest()


def run_fingerprint(settings: Settings, kind: str) -> str:
    """Everything but the file itself and the code (store.key) that decides a file's result:
    every rule and data file (their content) and the settings."""
    from ..rulebook.loader import builtin_rules_dir

    h = blake2b(f"{kind}\n".encode())
    parts = []
    if settings.include_builtin_rules:
        parts.append(run_scope.rule_dir_key(builtin_rules_dir(), builtin=True))
    # a user's: read again by every run
    parts.extend(run_scope.rule_dir_key(Path(d), builtin=False) for d in settings.rule_dirs)
    h.update("\n".join(parts).encode())
    # __struct_fields__: the names msgspec.structs.fields gives, without its ~1 ms of reading
    # the class's annotations on every call
    relevant = {name: getattr(settings, name) for name in type(settings).__struct_fields__
                if name not in NEUTRAL_SETTINGS}
    h.update(msgspec.json.encode(relevant, enc_hook=str, order="sorted"))
    return h.hexdigest()


class ResultCache:
    def __init__(self, fingerprint: str, verbose: bool = False):
        self.fingerprint = fingerprint
        self.verbose = verbose
        self.hits = self.misses = self.damaged = self.stale = 0
        # header digests of this run's look-ups
        self.digests: dict[str, bytes | None] = run_scope.run_digests()

    @classmethod
    def open(cls, settings: Settings, kind: str) -> "ResultCache | None":
        if not settings.use_cache or store.location() is None:
            return None
        return cls(run_fingerprint(settings, kind), settings.verbose)

    def key(self, path: str, digest: bytes) -> bytes:
        return store.key("result", self.fingerprint, os.fsencode(path), digest)

    def lookup(self, path: str, raw: bytes, root: Path, fixing: bool) -> Entry | None:
        """The cached result of the file `path` holding `raw`, if it still holds: its headers are
        unchanged and (`fixing`) its fixes re-applied to `raw` give its fixed text."""
        key = self.key(path, content_digest(raw))
        entry = self.get(key)
        if entry is None:
            self.misses += 1
            return None
        from ..lang.cxx.includes import dependencies_hold

        if not dependencies_hold(path, raw, root, _paths(entry.deps), self.digests):
            self._unhit(key)
            return None
        own_paths(entry.findings, path)
        own_paths(entry.fixed, path)
        if fixing and not replays(entry, raw, path):
            self.stale += 1
            self._note(f"{path}: the cached fixed text is not what its fixes re-applied to the file "
                       "give; recomputed")
            self._unhit(key)
            return None
        return entry

    def changes(self, path: str, raw: bytes, root: Path) -> bool | None:
        """Whether fix changes the file `path` holding `raw` (a fix-mode cache), from its cached
        result if that still holds (its headers unchanged); None if none does. Its findings
        stay encoded and its fixes are not re-applied: like a check's look-up, this reports
        what the result says, and writes nothing from it."""
        key = self.key(path, content_digest(raw))
        entry = self.get(key, _change_decoder())
        if entry is None:
            self.misses += 1
            return None
        from ..lang.cxx.includes import dependencies_hold

        if not dependencies_hold(path, raw, root, _paths(entry.deps), self.digests):
            self._unhit(key)
            return None
        return entry.error is None and entry.migrated is not None and entry.migrated != raw

    def _unhit(self, key: bytes) -> None:
        store.unused(key)
        self.hits -= 1
        self.misses += 1

    def _note(self, text: str) -> None:
        if self.verbose:
            import sys

            print(f"cuda2hip: cache: {text}", file=sys.stderr)

    def get(self, key: bytes, decoder=None) -> Entry | None:
        """The stored entry of `key` (decoded by `decoder`, default the whole Entry), or None."""
        stored = store.get(key)
        if stored is None:
            return None
        value = unseal(stored)
        try:
            if value is None:
                raise msgspec.DecodeError("checksum mismatch")
            entry = (decoder or _decoder()).decode(value)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self.damaged += 1
            store.unused(key)
            self._note("a stored result failed its checksum (a damaged cache entry); recomputed")
            return None
        self.hits += 1
        return entry

    def put(self, key: bytes, entry: Entry, path: str, encoded: bytes | None = None) -> None:
        store.put(key, seal(encoded if encoded is not None else encode_entry(entry, path)))

    def close(self) -> None:
        """Write the new results (with whatever else the run put in the store)."""
        if self.verbose:
            for note in store.notes():
                self._note(note)
            self._note(f"{self.hits} hit{'s' if self.hits != 1 else ''}, {self.misses} "
                       f"miss{'es' if self.misses != 1 else ''} ({self.damaged} damaged, {self.stale} with a "
                       f"stale fixed text) in {store.location()}")
        store.flush()
