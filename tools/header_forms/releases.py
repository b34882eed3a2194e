"""The HIP releases the data is generated from: one per Debian suite that packages HIP, each with
the clang headers of its hipcc.

- bookworm (HIP 5.2, clang 15): the headers installed here (`libamdhip64-dev`, `clang-15`), or the
  tree tests/harness/fetch_rocm_release_headers.py extracted;
- trixie (HIP 5.7, clang 17), sid (HIP 6.4, clang 21) and experimental (HIP 7.2, clang 22): the HIP
  headers of
  tests/harness/fetch_rocm_release_headers.py and the clang headers of
  tests/harness/fetch_hip_compiler_headers.py (both under .cache/).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .hip_side import Release

ROOT = Path(__file__).resolve().parents[2]
RELEASE_HEADERS = ROOT / ".cache" / "rocm-release-headers"
COMPILER_HEADERS = ROOT / ".cache" / "hip-compiler-headers"
INSTALLED = (Path("/usr/include"), 15, Path("/usr/lib/llvm-15/lib/clang/15.0.6/include"))


def hip_version(include: Path) -> str | None:
    """major.minor of the HIP headers under `include` (hip/hip_version.h)."""
    try:
        text = (include / "hip" / "hip_version.h").read_text()
    except OSError:
        return None
    major = re.search(r"#define HIP_VERSION_MAJOR (\d+)", text)
    minor = re.search(r"#define HIP_VERSION_MINOR (\d+)", text)
    return f"{major.group(1)}.{minor.group(1)}" if major and minor else None


def _package_version(suite: str) -> str:
    try:
        manifest = json.loads((RELEASE_HEADERS / "manifest.json").read_text())
        return manifest["suites"][suite]["packages"]["libamdhip64-dev"]
    except (OSError, KeyError, ValueError):
        return "?"


def available() -> tuple[list[Release], list[str]]:
    """The releases whose headers are here, oldest first, and what is missing (with the command
    that fetches it)."""
    out, missing = [], []
    include, clang, resource = INSTALLED
    rocm = hip_version(include)
    if rocm and resource.is_dir():
        out.append(Release(rocm, f"Debian bookworm libamdhip64-dev (HIP {rocm}, installed), clang {clang}",
                           include, str(clang), resource))
    else:
        missing.append("bookworm: HIP 5.2 and clang 15 (apt-get install libamdhip64-dev clang-15)")
    try:
        compilers = json.loads((COMPILER_HEADERS / "manifest.json").read_text())["suites"]
    except (OSError, KeyError, ValueError):
        compilers = {}
    for suite in ("trixie", "sid", "experimental"):
        include = RELEASE_HEADERS / suite / "usr" / "include"
        rocm = hip_version(include)
        entry = compilers.get(suite, {})
        resource = COMPILER_HEADERS / suite / "include"
        if rocm is None:
            missing.append(f"{suite}: HIP headers (python tests/harness/fetch_rocm_release_headers.py {RELEASE_HEADERS})")
            continue
        if "clang" not in entry or not resource.is_dir():
            missing.append(f"{suite}: hipcc's clang headers (python tests/harness/fetch_hip_compiler_headers.py "
                           f"{COMPILER_HEADERS})")
            continue
        out.append(Release(rocm, f"Debian {suite} libamdhip64-dev {_package_version(suite)}, {entry['package']}",
                           include, str(entry["clang"]), resource))
    out.sort(key=lambda r: tuple(int(p) for p in r.rocm.split(".")))
    return out, missing
