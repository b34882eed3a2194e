"""Prepare the HIP 7.2 and 6.4 syntax-check compilers (tests/harness/hip_toolchains.py uses them)
from Debian's packages, on Debian 12, without installing anything.

    python tests/harness/fetch_hip_toolchain.py [--release 7.2] [--release 6.4] [--refresh] [--dest DIR]

For each release: the HIP/ROCm -dev headers of the Debian suite that packages it (7.2: experimental,
6.4: sid) and the clang Debian's hipcc of that suite depends on (clang-N), with the shared libraries
it runs with, taken from trixie when trixie has that clang (its glibc is older), else from sid.
Each suite gets a private apt state (the system's sources, lists, package status and lock are not
touched; apt checks the suites' signatures against Debian's keyring and every package's hash);
`apt-get download` fetches the packages and `dpkg-deb` unpacks them into DEST/rocm-R-<digest>.
clang needs a newer glibc than Debian 12's: the unpacked one becomes its interpreter (patchelf).
A smoke test (a valid kernel compiles, an undeclared hipFooBar() does not) must pass before
DEST/rocm-R, a link, is switched to the new tree in one step: a half-fetched tree is never used.
DEST/rocm-R/manifest.json names every package's exact version.

Re-running is cheap: a prepared release is reused (--refresh fetches the suites again). DEST defaults
to hip_toolchains.root(): $CUDA2HIP_HIP_TOOLCHAINS, else ${XDG_CACHE_HOME:-~/.cache}/cuda2hip/hip-toolchains.
Exit status 0 when every asked release is ready, 1 otherwise (the reason is in DEST/rocm-R.failed,
and the tests that need the release skip with it).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hip_toolchains  # noqa: E402
from fetch_rocm_release_headers import MIRROR, apt_options, extract, run  # noqa: E402

# The Debian suite that packages each release's HIP headers.
HIP_SUITES = {"7.2": "experimental", "6.4": "sid"}
# Where the clang comes from: the first of these that has it.
TOOL_SUITES = ("trixie", "sid")
# The HIP runtime and the -dev package of each ROCm library, plus the header-only packages their
# headers include; whatever the suite lacks is left out (and recorded as missing).
ROCM_PACKAGES = (
    "libamdhip64-dev", "libhsa-runtime-dev", "libamd-comgr-dev",
    "libhipblas-dev", "libhipblas-common-dev", "libhipblaslt-dev", "librocblas-dev",
    "libhipfft-dev", "librocfft-dev",
    "libhipsolver-dev", "librocsolver-dev",
    "libhipsparse-dev", "librocsparse-dev", "libhipsparselt-dev",
    "libhiprand-dev", "librocrand-dev",
    "libhipcub-dev", "librocprim-dev", "librocthrust-dev",
    "libmiopen-dev", "librccl-dev", "librocwmma-dev",
)
# What a syntax check reads of a ROCm package: its headers, and HIP's version file (clang reads
# --rocm-path/share/hip/version).
ROCM_MEMBERS = ("./usr/include/*", "./usr/share/hip/*")
NOT_NEEDED = ("./usr/share/doc", "./usr/share/man", "./usr/share/locale", "./usr/share/lintian")

SMOKE_OK = """\
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
#include <cstring>
__global__ void k(const __hip_bfloat16* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? __bfloat162float(in[i]) : 0.0f;
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_xor(v, off);
  if (i < n) out[i] = v;
}
int main() {
  __hip_bfloat16* in; float* out; int n = 1024;
  if (hipMalloc(&in, n * sizeof(__hip_bfloat16)) != hipSuccess) return 1;
  (void)hipMalloc(&out, n * sizeof(float));
  hipLaunchKernelGGL(k, dim3(n / 256), dim3(256), 0, 0, in, out, n);
  std::memset(&n, 0, sizeof n);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
"""
SMOKE_BAD = "#include <hip/hip_runtime.h>\nint main() { hipFooBar(); return 0; }\n"


class FetchError(Exception):
    pass


def log(message: str) -> None:
    print(f"fetch_hip_toolchain: {message}", file=sys.stderr, flush=True)


class Apt:
    """One private apt state per suite, updated on first use."""

    def __init__(self, work: Path):
        self.work = work
        self.states: dict[str, list[str]] = {}

    def opts(self, suite: str) -> list[str]:
        if suite not in self.states:
            work = self.work / suite
            opts = apt_options(work, suite)
            log(f"apt-get update: {suite} (private state, signatures checked)")
            update = run(["apt-get", *opts, "-o", "APT::Update::Error-Mode=any", "update"])
            if update.returncode != 0 or not list((work / "state" / "lists").glob("*_Packages*")):
                raise FetchError(f"apt-get update of {suite} failed: {(update.stderr or update.stdout).strip()[:400]}")
            self.states[suite] = opts
        return self.states[suite]

    def has(self, suite: str, packages: list[str]) -> list[str]:
        """Which of `packages` the suite has."""
        shown = run(["apt-cache", *self.opts(suite), "show", "--no-all-versions", *packages]).stdout
        found = set(re.findall(r"^Package: (\S+)", shown, re.M))
        return [p for p in packages if p in found]

    def field(self, suite: str, package: str, name: str) -> str:
        shown = run(["apt-cache", *self.opts(suite), "show", "--no-all-versions", package]).stdout
        match = re.search(rf"^{name}: (.*)$", shown, re.M)
        return match.group(1) if match else ""

    def closure(self, suite: str, packages: list[str]) -> list[str]:
        """`packages` and what they need to run (Depends and Pre-Depends, recursively)."""
        out = run(["apt-cache", *self.opts(suite), "depends", "--recurse", "--no-recommends", "--no-suggests",
                   "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages]).stdout
        return sorted({line for line in out.splitlines() if re.match(r"[a-z0-9]", line)})

    def download(self, suite: str, packages: list[str], dest: Path) -> dict[str, str]:
        """Download `packages` of the suite into `dest`; {package: version}."""
        dest.mkdir(parents=True, exist_ok=True)
        got = run(["apt-get", *self.opts(suite), "download", *packages], cwd=dest)
        if got.returncode != 0:
            raise FetchError(f"apt-get download from {suite} failed: {got.stderr.strip()[:400]}")
        versions = {}
        for deb in dest.glob("*.deb"):
            name, version = run(["dpkg-deb", "-f", str(deb), "Package", "Version"]).stdout.split("\n")[:2]
            versions[name.removeprefix("Package: ")] = version.removeprefix("Version: ")
        missing = set(packages) - set(versions)
        if missing:
            raise FetchError(f"not downloaded from {suite}: {', '.join(sorted(missing))}")
        return versions


def _clang_of(apt: Apt, suite: str) -> int:
    depends = apt.field(suite, "hipcc", "Depends")
    match = re.search(r"\bclang-(\d+)\b", depends)
    if not match:
        raise FetchError(f"Debian {suite}'s hipcc names no clang-N (Depends: {depends or 'none'})")
    return int(match.group(1))


def _patch(folder: Path, llvm: int) -> None:
    """Make clang run with the unpacked glibc and libraries rather than the system's."""
    lib = folder / "toolchain" / "usr" / "lib" / "x86_64-linux-gnu"
    loader = next((p for p in (lib / "ld-linux-x86-64.so.2",
                               folder / "toolchain" / "lib" / "x86_64-linux-gnu" / "ld-linux-x86-64.so.2")
                   if p.exists()), None)
    if loader is None:
        raise FetchError("the unpacked libc6 has no ld-linux-x86-64.so.2")
    patchelf = [str(loader), "--library-path", str(lib), str(folder / "toolchain" / "usr" / "bin" / "patchelf")]
    clang = folder / "toolchain" / "usr" / "lib" / f"llvm-{llvm}" / "bin" / f"clang-{llvm}"
    if not clang.is_file():
        clang = clang.with_name("clang")
    steps = [[*patchelf, "--set-interpreter", str(loader), "--force-rpath", "--set-rpath", str(lib), str(clang)]]
    # their own RUNPATH would reach the system's (older) libraries
    steps += [[*patchelf, "--set-rpath", "$ORIGIN", str(so)] for pattern in ("libLLVM*.so*", "libclang-cpp.so*")
              for so in lib.glob(pattern) if not so.is_symlink()]
    for step in steps:
        done = run(step)
        if done.returncode != 0:
            raise FetchError(f"patchelf failed on {step[-1]}: {done.stderr.strip()[:300]}")


def _hip_version(folder: Path) -> str:
    header = (folder / "rocm" / "usr" / "include" / "hip" / "hip_version.h").read_text()
    parts = [re.search(rf"#define HIP_VERSION_{p} (\d+)", header) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise FetchError("hip/hip_version.h names no HIP_VERSION_MAJOR/MINOR/PATCH")
    return ".".join(m.group(1) for m in parts)


def _smoke_test(toolchain: hip_toolchains.Toolchain) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ok, bad = Path(tmp, "ok.hip"), Path(tmp, "bad.hip")
        ok.write_text(SMOKE_OK)
        bad.write_text(SMOKE_BAD)
        good = run([*toolchain.command, "-std=c++17", str(ok)], env=toolchain.env)
        if good.returncode != 0:
            raise FetchError(f"smoke test: a valid kernel does not compile:\n{good.stderr[-1500:]}")
        wrong = run([*toolchain.command, "-std=c++17", str(bad)], env=toolchain.env)
        if wrong.returncode == 0 or "hipFooBar" not in wrong.stderr:
            raise FetchError(f"smoke test: an undeclared hipFooBar() is not rejected:\n{wrong.stderr[-1500:]}")


def _hipcc_stand_in(toolchain: hip_toolchains.Toolchain, folder: Path) -> None:
    """bin/hipcc: the same compiler for scripts that call `hipcc` (PATH=DIR/bin:$PATH); it adds the
    default --offload-arch only when the caller names none."""
    flags, arch = " ".join(toolchain.hipcc[1:]), hip_toolchains.OFFLOAD_ARCH
    script = (f"#!/bin/sh\n# hipcc stand-in for syntax checks against HIP {toolchain.rocm_version} "
              f"(tests/harness/fetch_hip_toolchain.py)\nbase='-x hip {flags}'\n"
              f"case \" $* \" in *' --offload-arch'*) ;; *) base=\"$base --offload-arch={arch}\" ;; esac\n"
              f"exec {toolchain.hipcc[0]} $base \"$@\"\n")
    (folder / "bin").mkdir(exist_ok=True)
    (folder / "bin" / "hipcc").write_text(script)
    (folder / "bin" / "hipcc").chmod(0o755)


def prepare(release: str, base: Path, apt: Apt, work: Path) -> Path:
    """Fetch, unpack, patch and test one release; returns its new tree (not yet switched to)."""
    suite = HIP_SUITES[release]
    llvm = _clang_of(apt, suite)
    tool_suite = next((s for s in TOOL_SUITES if apt.has(s, [f"libllvm{llvm}"])), None)
    if tool_suite is None:
        raise FetchError(f"clang {llvm} is in none of {', '.join(TOOL_SUITES)}")
    rocm = apt.has(suite, list(ROCM_PACKAGES))
    if "libamdhip64-dev" not in rocm:
        raise FetchError(f"Debian {suite} has no libamdhip64-dev")
    tools = [f"clang-{llvm}", f"libclang-common-{llvm}-dev", f"libomp-{llvm}-dev",
             *apt.closure(tool_suite, [f"libllvm{llvm}", f"libclang-cpp{llvm}", "patchelf"])]
    log(f"{release}: downloading clang {llvm} from {tool_suite} ({len(tools)} packages), "
        f"ROCm headers from {suite} ({len(rocm)} packages)")
    debs = work / f"debs-{release}"
    packages = {**apt.download(tool_suite, tools, debs / "toolchain"), **apt.download(suite, rocm, debs / "rocm")}
    digest = hashlib.sha256(json.dumps(packages, sort_keys=True).encode()).hexdigest()[:12]
    folder = base / f"rocm-{release}-{digest}"
    if isinstance(hip_toolchains.load(folder, base), hip_toolchains.Toolchain):
        log(f"{release}: the packages are those of {folder.name}, already prepared")
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    # Unpacked where it stays (patchelf writes the loader's path into clang); the link that makes
    # it the release's tree is switched only once it works.
    for part, members, exclude in (("toolchain", (), NOT_NEEDED), ("rocm", ROCM_MEMBERS, ())):
        (folder / part).mkdir(parents=True)
        for deb in sorted((debs / part).glob("*.deb")):
            extract(deb, folder / part, members, exclude)
    _patch(folder, llvm)
    clang = f"toolchain/usr/lib/llvm-{llvm}/bin/clang++"
    version = run([str(folder / clang), "--version"]).stdout
    clang_version = re.search(r"clang version (\d+\.\d+\.\d+)", version)
    if not clang_version:
        raise FetchError(f"the unpacked clang does not run: {version.strip()[:300]}")
    hip_version = _hip_version(folder)
    if not hip_version.startswith(release + "."):
        raise FetchError(f"Debian {suite} now packages HIP {hip_version}, not {release}")
    rocm_version = re.match(r"(?:\d+:)?(\d+\.\d+\.\d+)", packages["libamdhip64-dev"]).group(1)
    manifest = {"format": hip_toolchains.FORMAT, "release": release, "rocm_version": rocm_version,
                "hip_version": hip_version, "clang_version": clang_version.group(1), "clang": clang,
                "hip_suite": suite, "tool_suite": tool_suite, "mirror": MIRROR, "fetched_at": int(time.time()),
                "packages": dict(sorted(packages.items())),
                "missing": [p for p in ROCM_PACKAGES if p not in rocm]}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    toolchain = hip_toolchains.load(folder, base)
    if isinstance(toolchain, str):
        raise FetchError(toolchain)
    _smoke_test(toolchain)
    _hipcc_stand_in(toolchain, folder)
    return folder


def fetch(releases: list[str], base: Path, refresh: bool = False) -> dict[str, str]:
    """{release: "" when ready, else why not}."""
    base.mkdir(parents=True, exist_ok=True)
    hip_toolchains.sysroot(base)
    outcome = {}
    with open(base / ".lock", "w") as lock, tempfile.TemporaryDirectory(prefix="hip-toolchain.") as work:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one fetch at a time per folder
        apt = Apt(Path(work))
        for release in releases:
            link = hip_toolchains.tree(release, base)
            current = hip_toolchains.load(link.resolve(), base) if link.is_symlink() else "absent"
            if not refresh and isinstance(current, hip_toolchains.Toolchain):
                log(f"{release}: reusing {link.resolve()} ({current.describe()})")
                outcome[release] = ""
                continue
            start = time.monotonic()
            note = hip_toolchains.failure_note(release, base)
            try:
                folder = prepare(release, base, apt, Path(work))
            except (FetchError, OSError) as exc:
                note.write_text(f"{time.strftime('%Y-%m-%d %H:%M')}: {exc}\n")
                log(f"{release}: FAILED: {exc}")
                outcome[release] = str(exc)
                continue
            hip_toolchains.switch_link(link, folder.name)
            note.unlink(missing_ok=True)
            for old in base.glob(f"rocm-{release}-*"):
                if old.name != folder.name:
                    shutil.rmtree(old, ignore_errors=True)
            ready = hip_toolchains.load(folder, base)
            log(f"{release}: ready in {time.monotonic() - start:.0f} s: {ready.describe()}, {folder}")
            outcome[release] = ""
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", action="append", choices=hip_toolchains.MODERN,
                        help="prepare this release (repeatable; default: all of them)")
    parser.add_argument("--dest", type=Path, help=f"where (default: {hip_toolchains.root()})")
    parser.add_argument("--refresh", action="store_true", help="fetch the suites again even if prepared")
    args = parser.parse_args(argv)
    outcome = fetch(args.release or list(hip_toolchains.MODERN), (args.dest or hip_toolchains.root()).resolve(),
                    args.refresh)
    return 0 if not any(outcome.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
