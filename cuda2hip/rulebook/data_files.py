"""YAML data files beside the rules (the tables a check reads: rules/api/data/*.yaml), parsed
once and then read from the store, keyed by their content: a run that uses them never imports
or runs PyYAML, whose import and parse cost more than a one-file check's rule set-up."""

from __future__ import annotations

from pathlib import Path

import msgspec


class DataFileError(ValueError):
    """A data file that is not valid YAML."""


def load_data(path: str):
    """The YAML document in `path` (read within bounded_yaml's limits). Raises OSError or
    ValueError (DataFileError, bounded_yaml.YamlLimitError)."""
    from ..cache import store
    from ..cache.keys import fingerprint

    key = store.key("rule-data", fingerprint("rule-data\0", [path])) if store.location() else None
    stored = store.get(key) if key else None
    if stored is not None:
        try:
            return msgspec.msgpack.decode(stored)
        except msgspec.DecodeError:
            pass
    import yaml

    from .bounded_yaml import load_bounded

    try:
        doc = load_bounded(Path(path))
    except yaml.YAMLError as exc:  # as a ValueError, so that callers need not import PyYAML
        raise DataFileError(f"not valid YAML: {exc}") from None
    try:
        encoded = msgspec.msgpack.encode(doc)
    except (TypeError, OverflowError, msgspec.EncodeError):
        return doc  # (not msgpack's: an integer past 64 bits) read from the file every time
    if key:
        store.put(key, encoded)
    # as a later run reads it from the store: one answer for every run (a YAML date is a string)
    return msgspec.msgpack.decode(encoded)
