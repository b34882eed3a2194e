"""Reading YAML that a user wrote (rule files, their tables) within fixed bounds.

PyYAML builds an alias (`*a`) as a reference to the anchored object, so a small file can stand
for billions of values (a "billion laughs" alias bomb) that validation would then copy one by
one: 1.5 KB took 35 s and 6 GB before a MemoryError. The document is therefore measured as
validation would see it, every alias expanded, before anything else reads it; the measure
visits each distinct object once, so it costs time linear in the file, not in its expansion.
"""

from __future__ import annotations

from pathlib import Path

# A rule file or table beyond these is refused. The largest built-in rule file has ~240 values
# and ~10 KB; a user table of 100,000 names (~3 MB) still fits.
MAX_BYTES = 16 * 1024 * 1024
MAX_VALUES = 1_000_000
MAX_DEPTH = 100  # built-in rules nest about 8 levels


class YamlLimitError(ValueError):
    """A YAML document beyond the bounds (too big, aliases expanding too far, recursive)."""


def load_bounded(path: Path):
    """The YAML document in `path` (PyYAML's safe loader). Raises OSError, yaml.YAMLError or
    YamlLimitError."""
    import yaml

    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise YamlLimitError(f"larger than {MAX_BYTES // (1024 * 1024)} MB; refused")
    doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    expanded_size(doc)
    return doc


def expanded_size(doc, limit: int = MAX_VALUES) -> int:
    """The number of values in `doc` with every shared object counted each time it is reached
    (what a copy of it holds). YamlLimitError beyond `limit` or on a cycle."""
    sizes: dict[int, int] = {}  # id -> expanded size of a container measured already
    open_ids: set[int] = set()  # containers being measured (on the path from the top)
    keep = []  # the measured objects stay alive, so their ids are not reused meanwhile

    def measure(obj, depth: int = 0) -> int:
        if isinstance(obj, dict):
            children = [v for kv in obj.items() for v in kv]
        elif isinstance(obj, list):
            children = obj
        else:
            return 1
        key = id(obj)
        known = sizes.get(key)
        if known is not None:
            return known
        if depth > MAX_DEPTH:
            raise YamlLimitError(f"nested deeper than {MAX_DEPTH} levels; refused")
        if key in open_ids:
            raise YamlLimitError("an alias refers to a mapping or list that holds it (recursive "
                                 "document); refused")
        open_ids.add(key)
        total = 1
        for child in children:
            total += measure(child, depth + 1)
            if total > limit:
                raise YamlLimitError(f"its aliases expand to more than {limit:,} values (an alias "
                                     "bomb?); refused")
        open_ids.discard(key)
        sizes[key] = total
        keep.append(obj)
        return total

    return measure(doc)
