"""Which type a parameter declaration denotes, in CUDA and after renaming in HIP.

Types are compared as the compiler's mangling spells them once every typedef is resolved
(`void *`, `ihipStream_t *`, `char const *`): tools/generate_collision_data.py found, in the real
headers, the CUDA names that denote different CUDA types but one HIP type
(rules/api/collisions/{profile}.json). A type the data does not name is its own spelling (after
renaming, on the HIP side), so two spellings are one type only where the data or the builtin
typedefs say so.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import msgspec

from ..lang.cxx.types import STD_TYPEDEFS

class TypeData(NamedTuple):
    hip: dict[str, str]  # HIP name -> the type it denotes (only the names of collision classes)
    cuda: dict[str, str]  # CUDA name -> the CUDA type it denotes (the same names)
    classes: dict[str, dict[str, str]]  # HIP type -> {CUDA name: CUDA type}


@lru_cache(maxsize=4)
def load(profile: str) -> TypeData:
    from ..rulebook.loader import builtin_rules_dir

    path = Path(builtin_rules_dir()) / "api" / "collisions" / f"{profile}.json"
    payload = msgspec.json.decode(path.read_bytes())
    return TypeData(payload["hip"], payload["cuda"], payload["classes"])


class Namer:
    """Maps a type name to what it denotes on one side: `hip` (after renaming) or `cuda`."""

    def __init__(self, data: TypeData, rename):
        self.data = data
        self.rename = rename  # CUDA name -> its HIP name, or None where it is not renamed

    def hip(self, name: str) -> str:
        target = self.rename(name) or name
        return STD_TYPEDEFS.get(target) or self.data.hip.get(target, target)

    def cuda(self, name: str) -> str:
        return STD_TYPEDEFS.get(name) or self.data.cuda.get(name, name)
