"""The fetched ROCm releases (tests/harness/fetch_rocm_release_headers.py): which packages each
Debian suite has, at which version, and what their files declare and provide.

Declarations of a package are cached next to its tree (DEST/<suite>/declarations/<pkg>.json), keyed
by the package version and this module's format, so a second audit does not parse again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .corrections import rocm_version
from .declarations import Declarations, package_declarations

FORMAT = "2"
# Opt-in configurations whose declarations count as "declared with -DNAME" (documented switches).
OPTIONS = {
    # clr hip/amd_detail/amd_warp_sync_functions.h: the _sync warp functions before ROCm 7.0
    "libamdhip64-dev": ("HIP_ENABLE_WARP_SYNC_BUILTINS",),
    # miopen/miopen.h: the backend (graph) API is declared only under MIOPEN_BETA_API
    "libmiopen-dev": ("MIOPEN_BETA_API",),
}
CMAKE_TARGET = re.compile(r"add_library\(\s*([A-Za-z0-9_.+-]+::[A-Za-z0-9_.+-]+)\s+\w+\s+IMPORTED")


@dataclass
class Package:
    suite: str
    name: str
    version: str  # Debian version
    files: list[str]
    root: Path  # the suite's tree (its usr/include is the include path)

    @property
    def rocm(self) -> str:
        return rocm_version(self.version)

    def declarations(self, defines: tuple[str, ...] = ()) -> Declarations:
        key = "-".join(defines) or "default"
        cache = self.root / "declarations" / f"{self.name}.{key}.json"
        stamp = f"{FORMAT} {self.version}"
        if cache.is_file():
            got = json.loads(cache.read_text())
            if got.get("stamp") == stamp:
                return Declarations(got["names"], got["failed"])
        decl = package_declarations(self.root / "usr" / "include", self.files, defines)
        cache.parent.mkdir(exist_ok=True)
        cache.write_text(json.dumps({"stamp": stamp, "names": decl.names, "failed": decl.failed}))
        return decl

    def headers(self) -> set[str]:
        return {f[len("usr/include/"):] for f in self.files if f.startswith("usr/include/")}

    def libraries(self) -> set[str]:
        """Linker names (-lNAME) of the lib*.so development links."""
        return {m.group(1) for f in self.files if (m := re.fullmatch(r"usr/lib/[^/]+/lib([^/]+)\.so", f))}

    def cmake_packages(self) -> set[str]:
        """find_package() names: <name>-config.cmake / <Name>Config.cmake."""
        out = set()
        for f in self.files:
            m = re.fullmatch(r"usr/lib/[^/]+/cmake/[^/]+/(.+?)(?:-config|Config)\.cmake", f)
            if m:
                out.add(m.group(1))
        return out

    def cmake_targets(self) -> set[str]:
        out = set()
        for f in self.files:
            if "/cmake/" in f and f.endswith(".cmake"):
                try:
                    out.update(CMAKE_TARGET.findall((self.root / f).read_text(errors="replace")))
                except OSError:
                    continue
        return out


def load(dest: Path) -> tuple[dict[str, dict[str, Package]], dict]:
    """suite -> package name -> Package, and the fetch manifest."""
    manifest = json.loads((dest / "manifest.json").read_text())
    suites: dict[str, dict[str, Package]] = {}
    for suite, entry in manifest["suites"].items():
        pkgs = {}
        for name, version in entry["packages"].items():
            listing = dest / suite / "files" / f"{name}.txt"
            files = listing.read_text().split("\n") if listing.is_file() else []
            pkgs[name] = Package(suite, name, version, [f for f in files if f], dest / suite)
        suites[suite] = pkgs
    return suites, manifest
