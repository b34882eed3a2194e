"""The HIP syntax-check compiler of each ROCm release the project proves its output against.

    RELEASES = ("7.2", "6.4", "5.2")
    command("7.2") -> [..., "-x", "hip", "--offload-arch=gfx90a", "-fsyntax-only"] or None
    env("7.2")     -> the environment to run it in, or None
    why_missing("7.2") -> why it is None (for skip messages)
    get("7.2")     -> a Toolchain: also its exact HIP and clang versions and a cache identity

Append flags and the file to `command(release)`; the command checks syntax and semantics for an
AMD GPU (gfx90a), it does not build objects. The ROCm library headers of 7.2 and 6.4 are in their
own trees; those of 5.2's libraries that Debian 12 lacks are fetched apart: add
`library_includes(release)` as -I folders.

- 5.2 is Debian 12's `hipcc` on PATH (HIP 5.2, clang 15), run with HIP_PLATFORM=amd (it picks the
  NVIDIA platform when nvcc is on PATH).
- 7.2 and 6.4 are Debian's packages of those releases (HIP headers of experimental and sid, the clang
  Debian's hipcc of that suite uses) prepared by tests/harness/fetch_hip_toolchain.py under
  `root()`: ${CUDA2HIP_HIP_TOOLCHAINS:-${XDG_CACHE_HOME:-~/.cache}/cuda2hip/hip-toolchains}. Its clang
  runs with a newer glibc of its own, and sees the system's /usr/include through a sysroot of links
  that leaves out the HIP 5.2 headers Debian 12 puts there (clang searches /usr/include before
  --rocm-path). -nogpulib: a syntax check needs no device libraries.

`python tests/harness/hip_toolchains.py` prints what each release is, or why it is missing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # (run as a script from anywhere)
from cuda2hip.rocm_releases import AUDITED  # noqa: E402

# The releases cuda2hip targets (one list: cuda2hip/rocm_releases.py), newest first.
RELEASES = tuple(reversed(AUDITED))
MODERN = tuple(r for r in RELEASES if r != "5.2")  # the releases fetch_hip_toolchain.py prepares
OFFLOAD_ARCH = "gfx90a"
SYNTAX_CHECK = ["-x", "hip", f"--offload-arch={OFFLOAD_ARCH}", "-fsyntax-only"]
FETCH = "python tests/harness/fetch_hip_toolchain.py"
# The headers of the ROCm libraries Debian 12 lacks, for 5.2 (tests/harness/fetch_rocm_library_headers.sh).
ROCM_LIBRARY_INCLUDE = Path(os.environ.get("CUDA2HIP_ROCM_LIBRARY_HEADERS",
                                           ROOT / ".cache" / "rocm-library-headers")) / "usr" / "include"
# Entries of /usr/include that belong to ROCm: Debian 12 installs HIP 5.2's there, and clang would
# find them before the release's own (the sysroot leaves them out).
ROCM_INCLUDE_NAMES = re.compile(
    r"(hip.*|hsa|hsakmt|amd_comgr.*|miopen|rccl|thrust|origami|roc.*|rocm.*)$")
# The version of the layout fetch_hip_toolchain.py writes; a tree of another format is fetched again.
FORMAT = 1


@dataclass(frozen=True)
class Toolchain:
    release: str        # "7.2"
    hipcc: tuple[str, ...]  # what stands in for `hipcc`: the compiler and the flags that make it one
    environment: tuple[tuple[str, str], ...]  # what it needs set in the environment
    rocm_version: str   # the ROCm release of its HIP headers: "7.2.4"
    hip_version: str    # hip_version.h's MAJOR.MINOR.PATCH: "7.2.53211"
    clang_version: str  # "22.1.8"
    identity: str       # changes whenever the compiler or its headers do (for compile cache keys)
    # folders of ROCm library headers outside the release's tree (5.2: fetched; absent until then)
    library_includes: tuple[str, ...] = ()

    @property
    def command(self) -> list[str]:
        return [*self.hipcc, *SYNTAX_CHECK]

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, **dict(self.environment))

    def describe(self) -> str:
        return f"HIP {self.rocm_version} / clang {self.clang_version}"


def root() -> Path:
    """Where fetch_hip_toolchain.py prepares the modern toolchains (outside the repository)."""
    if os.environ.get("CUDA2HIP_HIP_TOOLCHAINS"):
        return Path(os.environ["CUDA2HIP_HIP_TOOLCHAINS"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "cuda2hip" / "hip-toolchains"


def tree(release: str, base: Path | None = None) -> Path:
    """The link to the release's current tree (switched in one step when a fetch completes)."""
    return (base or root()) / f"rocm-{release}"


def failure_note(release: str, base: Path | None = None) -> Path:
    return (base or root()) / f"rocm-{release}.failed"


# ---- the sysroot: /usr/include without ROCm's headers ---------------------------------------------

def sysroot(base: Path | None = None) -> Path:
    """A sysroot that shows the system's /usr/include but for its ROCm entries, and /usr/lib/gcc
    (where clang finds the host's libstdc++). One folder of links per /usr/include listing, so a
    package installed later is seen; `base/sysroot` is a link switched in one step, so compiles
    running meanwhile never see a half-built one. Cheap when current."""
    base = base or root()
    names = sorted(n for n in os.listdir("/usr/include") if not ROCM_INCLUDE_NAMES.match(n))
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]
    link, folder = base / "sysroot", base / f"sysroot-{digest}"
    if os.path.islink(link) and os.readlink(link) == folder.name:
        return link
    if not folder.is_dir():
        partial = base / f"{folder.name}.{os.getpid()}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        (partial / "usr" / "include").mkdir(parents=True)
        (partial / "usr" / "lib").mkdir()
        os.symlink("/usr/lib/gcc", partial / "usr" / "lib" / "gcc")
        for name in names:
            os.symlink(f"/usr/include/{name}", partial / "usr" / "include" / name)
        try:
            os.rename(partial, folder)
        except OSError:  # another process made it first
            shutil.rmtree(partial, ignore_errors=True)
    switch_link(link, folder.name)
    return link


def switch_link(link: Path, target: str) -> None:
    """Point `link` at `target` in one step (rename over it)."""
    new = link.with_name(f"{link.name}.{os.getpid()}.new")
    if os.path.lexists(new):
        os.unlink(new)
    os.symlink(target, new)
    os.replace(new, link)


# ---- the toolchains ---------------------------------------------------------------------------------

def _modern(release: str) -> Toolchain | str:
    base = root()
    folder = tree(release, base)
    if not (folder / "manifest.json").is_file():
        note = failure_note(release, base)
        last = f"; the last fetch failed: {note.read_text().strip()[:300]}" if note.is_file() else ""
        return f"the HIP {release} toolchain is not in {base} ({FETCH} --release {release} prepares it){last}"
    return load(folder.resolve(), base)


def load(folder: Path, base: Path) -> Toolchain | str:
    """The toolchain prepared in `folder` (its manifest.json), or why it cannot be used."""
    fetch = f"{FETCH} --release {folder.name.split('-')[1]} --refresh"
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        return f"{folder}/manifest.json is unreadable ({exc}; {fetch})"
    if manifest.get("format") != FORMAT:
        return f"the toolchain in {folder} has an older layout ({fetch})"
    clang = folder / manifest["clang"]
    if not os.access(clang, os.X_OK):
        return f"{clang} is missing ({fetch})"
    try:
        system_root = sysroot(base)
    except OSError as exc:  # a folder this user cannot write: the sysroot there, as it is
        system_root = base / "sysroot"
        if not system_root.is_dir():
            return f"cannot prepare the sysroot in {base}: {exc}"
    hipcc = (str(clang), "-O3", "-nogpulib", f"--sysroot={system_root}", f"--rocm-path={folder / 'rocm' / 'usr'}")
    packages = json.dumps(manifest["packages"], sort_keys=True)
    return Toolchain(manifest["release"], hipcc, (), manifest["rocm_version"], manifest["hip_version"],
                     manifest["clang_version"],
                     f"{manifest['release']}:{hashlib.sha256(packages.encode()).hexdigest()[:16]}")


def _system_52() -> Toolchain | str:
    exe = shutil.which("hipcc")
    if exe is None:
        return ("hipcc not installed (apt-get install hipcc libamdhip64-dev; every test tool at once: "
                "bash tools/install-test-deps.sh)")
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, HIP_PLATFORM="amd")).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{exe} --version failed: {exc}"
    hip = re.search(r"HIP version: (\d+\.\d+\.\d+)", out)
    clang = re.search(r"clang version (\d+\.\d+\.\d+)", out)
    if not hip or not clang:
        return f"{exe} --version names no HIP and clang version: {out.strip()[:200]}"
    if not hip.group(1).startswith("5.2."):
        return f"the hipcc on PATH ({exe}) is HIP {hip.group(1)}, not 5.2"
    # Debian's package version is the ROCm release ("5.2.3-8" -> 5.2.3); elsewhere the header's.
    dpkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libamdhip64-dev"], capture_output=True,
                          text=True) if shutil.which("dpkg-query") else None
    package = re.match(r"(?:\d+:)?(\d+\.\d+\.\d+)", dpkg.stdout) if dpkg and dpkg.returncode == 0 else None
    rocm = package.group(1) if package else hip.group(1)
    identity = f"5.2:{hashlib.sha256(out.encode() + rocm.encode()).hexdigest()[:16]}"
    return Toolchain("5.2", (exe,), (("HIP_PLATFORM", "amd"),), rocm, hip.group(1), clang.group(1), identity,
                     (str(ROCM_LIBRARY_INCLUDE),))


@functools.cache
def _find(release: str, where: str) -> Toolchain | str:
    if release not in RELEASES:
        raise ValueError(f"unknown release {release!r}; the releases are {', '.join(RELEASES)}")
    return _system_52() if release == "5.2" else _modern(release)


def get(release: str) -> Toolchain | None:
    """The release's toolchain, or None when it is absent (why_missing says why)."""
    found = _find(release, str(root()))
    return found if isinstance(found, Toolchain) else None


def why_missing(release: str) -> str:
    found = _find(release, str(root()))
    return "" if isinstance(found, Toolchain) else found


def command(release: str) -> list[str] | None:
    """The syntax-check command of the release (append flags and the file), or None."""
    found = get(release)
    return found.command if found else None


def env(release: str) -> dict[str, str] | None:
    found = get(release)
    return found.env if found else None


def library_includes(release: str) -> list[str]:
    """-I folders with the release's ROCm library headers that are not in its own tree (those
    that are there: 5.2's are fetched by tests/harness/fetch_rocm_library_headers.sh)."""
    found = get(release)
    return [d for d in found.library_includes if os.path.isdir(d)] if found else []


def rescan() -> None:
    """Forget what was found (after a fetch, or with another CUDA2HIP_HIP_TOOLCHAINS)."""
    _find.cache_clear()


def available() -> list[str]:
    return [r for r in RELEASES if get(r)]


def main() -> int:
    for release in RELEASES:
        found = get(release)
        print(f"{release}: {found.describe()} (hip_version.h {found.hip_version}): {' '.join(found.command)}"
              if found else f"{release}: absent: {why_missing(release)}")
    return 0 if available() else 1


if __name__ == "__main__":
    sys.exit(main())
