"""The ROCm releases cuda2hip migrates for: exactly those whose headers the name tables were audited
against by compiling (tools/audit_rule_data.py --probe; the table in docs/audit.md). This list is
the one place that says which they are: the `--target-rocm` option and the `target-rocm`
configuration key accept these and nothing else, the default is the newest, and the audit, the
documentation and the tests read it from here.

A target is always a real release: every name the rewriter writes, every "needs a newer ROCm" /
"removed in" finding, every `HIP_VERSION` comparison the preprocessor rules evaluate is judged
against that release's headers.
"""

from __future__ import annotations

# Oldest first. Each is a ROCm release line (major.minor) whose HIP headers and library headers the
# audit compiles probes against: 5.2 (Debian 12's hipcc), 6.4 (Debian sid), 7.2 (Debian
# experimental).
AUDITED = ("5.2", "6.4", "7.2")
DEFAULT = AUDITED[-1]


def version_tuple(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.split("."))


def listing() -> str:
    """`5.2, 6.4, 7.2` for messages."""
    return ", ".join(AUDITED)


def invalid(value: object) -> str | None:
    """Why `value` is not a target release (None: it is one)."""
    if isinstance(value, str) and value in AUDITED:
        return None
    return (f"{value!r} is not a ROCm release cuda2hip was audited against; "
            f"choose one of {listing()} (default {DEFAULT})")
