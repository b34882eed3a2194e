"""Facts that follow from a file's content alone (the names a local header defines), kept in the
store (store.py) between runs: a pre-commit call on a file reads the project headers it includes,
and parsing them again on every call costs more than checking the file itself (llama.cpp's
`common.cuh` chain: ~250 ms a call).

One value per (kind, content digest); the store's key covers the code, so a fact is never read
by other code than the code that derived it. Used only by runs that use the result cache
(`configure`): `--no-cache` runs derive everything afresh. Best effort.
"""

from __future__ import annotations

from .digest import blake2b

_enabled = False


def configure(use_cache: bool) -> None:
    """Whether this run reads and writes the facts (`Settings.use_cache`)."""
    global _enabled
    _enabled = use_cache


def _key(kind: str, data: bytes) -> bytes | None:
    from . import store

    if not _enabled or store.location() is None:
        return None
    return store.key("fact", kind, blake2b(data, digest_size=16).digest())


def lookup(kind: str, data: bytes) -> bytes | None:
    """The stored fact of `kind` for the content `data`, or None (also for a damaged one: each
    carries a checksum)."""
    key = _key(kind, data)
    if key is None:
        return None
    from . import store

    stored = store.get(key)
    return None if stored is None else store.unseal(stored)


def store(kind: str, data: bytes, payload: bytes) -> None:
    """Keep `payload` as the fact of `kind` for the content `data`."""
    key = _key(kind, data)
    if key is not None:
        from . import store as the_store

        the_store.put(key, the_store.seal(payload))
