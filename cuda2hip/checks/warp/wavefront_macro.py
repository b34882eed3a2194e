"""HIP409: clang's `__AMDGCN_WAVEFRONT_SIZE` / `__AMDGCN_WAVEFRONT_SIZE__` macros, which the
targeted release's compiler no longer (or does not yet) define. Checked by compiling with each
release's hip-clang: clang 15 (ROCm 5.2) defines `__AMDGCN_WAVEFRONT_SIZE` only; clang 21 (ROCm
6.4) defines both and marks them deprecated ("compile-time-constant access to the wavefront size
will be removed in a future release"); clang 22 (ROCm 7.2) defines neither."""

from __future__ import annotations

from ...api.forms import _release
from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...lang.cxx.syntax import enclosing_function, is_device_function, text

CHECKED = ("5.2", "6.4", "7.2")
# per checked release: "defined", "deprecated" or "gone" (never defined counts as gone)
STATUS = {
    "__AMDGCN_WAVEFRONT_SIZE": ("defined", "deprecated", "gone"),
    "__AMDGCN_WAVEFRONT_SIZE__": ("gone", "deprecated", "gone"),
}
COMPILER = {"5.2": "clang 15 (ROCm 5.2)", "6.4": "clang 21 (ROCm 6.4)", "7.2": "clang 22 (ROCm 7.2)"}
_CONDITIONS = ("preproc_if", "preproc_elif")


@predicate("wavefront-size-macro", requires=tuple(STATUS))
def wavefront_size_macro(node, env, ctx, args):
    """A use of a wavefront-size macro that the target's compiler lacks or deprecates. Adds
    $NAME, $WHAT and $INSTEAD, and sets the severity through $LEVEL (error / warning)."""
    name = text(node, ctx.data)
    statuses = STATUS.get(name)
    if statuses is None:
        return False
    parent = node.parent
    if parent is not None and parent.type in ("preproc_ifdef", "preproc_defined", "preproc_def",
                                              "preproc_undef", "preproc_function_def"):
        return False  # a presence test picks the other branch, which is what it is for
    if ctx.is_fragment:  # a macro body: judge where it stands in the file
        fc = ctx.file_context
        at = fc.tree.root_node.descendant_for_byte_range(ctx.base + node.start_byte, ctx.base + node.end_byte)
        if at is not None and _guarded(at, name, fc.data):
            return False
    elif _guarded(node, name, ctx.data):
        return False
    rel = _release(CHECKED, ctx.settings.target_rocm or "")
    status = statuses[rel.index]
    if status == "defined":
        return False
    compiler = COMPILER[rel.rocm]
    in_condition = _in_condition(node)
    if status == "deprecated":
        what = f"{compiler} marks `{name}` deprecated (clang 22, ROCm 7.2's compiler, no longer defines it)"
    elif in_condition:
        what = (f"{compiler} does not define `{name}`: this `#if` compares 0 instead, silently taking the "
                "other branch")
    else:
        what = f"{compiler} does not define `{name}`: \"use of undeclared identifier\""
    fn = enclosing_function(node)
    if in_condition or fn is None:
        instead = ("test the wavefront size in code with `warpSize`, or on the host with "
                   "`hipDeviceGetAttribute(&w, hipDeviceAttributeWarpSize, device)`")
    elif is_device_function(fn, ctx.data):
        instead = "use `warpSize` (not a constant expression from ROCm 7.0)"
    else:
        instead = "query `hipDeviceGetAttribute(&w, hipDeviceAttributeWarpSize, device)` on the host"
    return {"NAME": capture(node, ctx.data), "WHAT": capture(node, ctx.data, what),
            "INSTEAD": capture(node, ctx.data, instead),
            "LEVEL": capture(node, ctx.data, "warning" if status == "deprecated" else "error")}


def _guarded(node, name: str, data: bytes) -> bool:
    """Inside the taken branch of `#ifdef NAME` / `#if defined(NAME)`."""
    child, cur = node, node.parent
    while cur is not None:
        if cur.type in ("preproc_ifdef", "preproc_if") and cur.child_by_field_name("alternative") != child:
            head = data[cur.start_byte:data.find(b"\n", cur.start_byte)].decode("utf-8", "replace")
            if (cur.type == "preproc_ifdef" and head.split()[0].endswith("ifdef") and name in head.split()) \
                    or f"defined({name})" in head.replace(" ", "") or f"defined{name}" in head.replace(" ", ""):
                return True
        child, cur = cur, cur.parent
    return False


def _in_condition(node) -> bool:
    cur = node.parent
    while cur is not None:
        if cur.type in _CONDITIONS:
            return cur.child_by_field_name("condition") is not None and \
                cur.child_by_field_name("condition").start_byte <= node.start_byte < \
                cur.child_by_field_name("condition").end_byte
        cur = cur.parent
    return False


@fix_builder("wavefront-size-level")
def wavefront_size_level(match, ctx, rule):
    """No rewrite (whether a constant is needed is the code's design); an error where the macro
    is gone, a warning where it is deprecated."""
    return BuiltFix(None, severity=match.env["LEVEL"].text)
