"""The resident server: a process that has imported cuda2hip and loaded its rules and name tables
once, and runs each `check` it is handed in a fork of itself, with the caller's arguments,
working directory, environment, umask and standard streams (passed as file descriptors). A
pre-commit call then pays the interpreter's start-up and the check of its files, not the ~100 ms
of imports and rule loading before the first file is read.

A client uses a server only when it runs exactly the same code the client would: same
interpreter, same package folder and built-in rules (every file's size and modification time),
same start-up environment of the interpreter (PYTHON*, LC_*, LANG), same user, groups and
resource limits (a fork has the server's, not the caller's). That identity is the
`code_key`; the socket's name carries it, so a client never meets a server of other code,
and a server whose files change stops itself (`server.py`).

This module is imported by every `cuda2hip` call: standard library built-ins only.
"""

from __future__ import annotations

import os
import sys

# What the interpreter reads from the environment when it starts (encodings, paths, flags): a
# fork of a server started with other values would not behave as a fresh process would.
STARTUP_ENV_PREFIXES = ("PYTHON", "LC_")
STARTUP_ENV_NAMES = ("LANG", "LANGUAGE")
# The client's own switch: never use a server (tests, debugging).
NO_SERVER_ENV = "CUDA2HIP_NO_SERVER"
# Where the sockets live (default: $XDG_RUNTIME_DIR/cuda2hip, else /tmp/cuda2hip-UID).
RUNTIME_DIR_ENV = "CUDA2HIP_RUNTIME_DIR"
DEFAULT_IDLE_MINUTES = 30
# The commands a server runs; any other runs in the caller's process.
SERVED_COMMANDS = ("check", "fix")
# Limits a fork would inherit from the server instead of the caller's (`ulimit`).
LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_STACK", "RLIMIT_CORE")


def package_dirs() -> tuple[str, ...]:
    """The package's folder and the built-in rules' (a checkout's rules/ in editable installs:
    see rulebook.loader.builtin_rules_dir, which this mirrors without importing pathlib)."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # cuda2hip/
    checkout = os.path.dirname(package)
    rules = os.path.join(checkout, "rules")
    if os.path.isfile(os.path.join(rules, "__init__.py")) and os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        return package, rules
    return (package,)


def _file_stats(top: str, out: list) -> None:
    try:
        entries = os.scandir(top)
    except OSError:
        return
    with entries:
        for e in entries:
            if e.name == "__pycache__":
                continue
            if e.is_dir(follow_symlinks=False):
                _file_stats(e.path, out)
            else:
                try:
                    st = e.stat()
                except OSError:
                    continue
                out.append(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}")


def code_key() -> str:
    """The identity of the code a process started now would run (see the module's docstring)."""
    # sys.path[0] is the script's folder or the working directory (`python -m`): not the code
    parts = [sys.executable, sys.version, repr(sys.flags), "\0".join(sys.path[1:])]
    for top in package_dirs():
        _file_stats(top, parts)
    # What the process may do: a fork has the server's groups and limits, not the caller's.
    parts.append(f"{os.geteuid()} {os.getegid()} {sorted(os.getgroups())}")
    import resource

    parts.extend(str(resource.getrlimit(getattr(resource, name))) for name in LIMITS if hasattr(resource, name))
    env = os.environ
    parts.extend(f"{k}={env[k]}" for k in sorted(env)
                 if k.startswith(STARTUP_ENV_PREFIXES) or k in STARTUP_ENV_NAMES)
    from ..cache.digest import blake2b

    return blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


def runtime_dir() -> str:
    """The folder of this user's server sockets (not created here)."""
    base = os.environ.get(RUNTIME_DIR_ENV)
    if base:
        return base
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "cuda2hip")
    return f"/tmp/cuda2hip-{os.getuid()}"


def private_dir(path: str) -> str | None:
    """Why `path` may not hold this user's sockets (None: it may): anyone who can write there
    could put a socket that a `check` would hand its terminal and arguments to."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    import stat

    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.geteuid():
        return "belongs to another user"
    if st.st_mode & 0o077:
        return "is open to other users (mode %o)" % stat.S_IMODE(st.st_mode)
    return None


def socket_path(key: str) -> str:
    return os.path.join(runtime_dir(), f"server-{key}.sock")
