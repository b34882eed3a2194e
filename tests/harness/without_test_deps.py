"""Run a command as on a fresh machine: the Debian packages of tools/test-deps.txt, the fetched
header trees under .cache/ and the fetched HIP toolchains are hidden from it, nothing is uninstalled.

The command runs in a private mount namespace (root, Linux): every file that only those packages
own is covered with /dev/null (not a regular file, not executable: `shutil.which` and `is_file()`
miss it), every directory holding nothing but their files, the repository's .cache and the HIP
toolchains' folder (tests/harness/hip_toolchains.py), with an empty directory. Other processes of
the machine see no change. .ci/run runs the README's commands under it before it installs the
extras, so a test that needs one of them without checking for it fails there. Packages that the
listed ones pulled in (clang, the ROCm device libraries...) stay visible: tests are expected to
check for the listed package itself.

Usage: python3 tests/harness/without_test_deps.py [--only PKG,PKG] -- COMMAND [ARG...]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hip_toolchains  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / "tools" / "test-deps.txt"
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18


def listed_packages() -> list[str]:
    names = []
    for line in DEPS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split()[0])
    return names


def installed_files(packages: list[str]) -> set[str]:
    """Paths dpkg lists for the installed ones of `packages`."""
    owned: set[str] = set()
    for pkg in packages:
        res = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
        if res.returncode == 0:
            owned.update(line for line in res.stdout.splitlines() if line.startswith("/"))
    return owned


def _only_owned(directory: str, owned: set[str]) -> bool:
    """Whether everything under `directory` belongs to the hidden packages."""
    for top, dirs, files in os.walk(directory):
        for name in dirs + files:
            if os.path.join(top, name) not in owned:
                return False
    return True


def hiding_plan(owned: set[str]) -> tuple[list[str], list[str]]:
    """(directories to cover with an empty one, files to cover with /dev/null)."""
    dirs: list[str] = []
    for path in sorted(p for p in owned if os.path.isdir(p) and not os.path.islink(p)):
        if any(path.startswith(d + "/") for d in dirs):
            continue
        if _only_owned(path, owned):
            dirs.append(path)
    files = [p for p in sorted(owned)
             if os.path.isfile(p) and not os.path.islink(p) and not any(p.startswith(d + "/") for d in dirs)]
    return dirs, files


def _mount(libc, source: str | None, target: str, flags: int) -> None:
    if libc.mount(source and source.encode(), target.encode(), None, flags, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def hide(dirs: list[str], files: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNS): {os.strerror(err)}")
    _mount(libc, None, "/", MS_REC | MS_PRIVATE)  # nothing below leaks to the rest of the machine
    empty = tempfile.mkdtemp(prefix="hidden-")
    os.chmod(empty, 0o755)
    for d in dirs:
        _mount(libc, empty, d, MS_BIND)
    for f in files:
        _mount(libc, "/dev/null", f, MS_BIND)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="hide only these packages (comma-separated) and keep .cache")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command given")
    packages = args.only.split(",") if args.only else listed_packages()
    dirs, files = hiding_plan(installed_files(packages))
    cache = ROOT / ".cache"
    if not args.only and cache.is_dir():
        dirs.append(str(cache.resolve()))
    toolchains = hip_toolchains.root()
    if not args.only and toolchains.is_dir():
        dirs.append(str(toolchains.resolve()))
    if dirs or files:
        try:
            hide(dirs, files)
        except OSError as exc:
            # Without the privilege (not root, a container without CAP_SYS_ADMIN) the command
            # still runs: on a fresh machine there is nothing to hide.
            print(f"without_test_deps: cannot hide the test dependencies ({exc}); running with them visible",
                  file=sys.stderr)
        else:
            print(f"without_test_deps: hiding {', '.join(packages)}"
                  f"{', .cache and the HIP toolchains' if not args.only else ''} "
                  f"({len(dirs)} directories, {len(files)} files)", file=sys.stderr)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
