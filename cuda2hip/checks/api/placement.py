"""Where an include a check adds goes in a file: after `#pragma once` or the include guard's
#define, else after the leading comments."""

from __future__ import annotations

from ...lang.cxx.preprocessor.directives import negated


def top_of_file(ctx) -> int:
    """After `#pragma once` or the include guard's #define, else after leading comments."""
    root = ctx.tree.root_node
    children = [c for c in root.children if c.type != "comment"]
    if not children:
        return 0
    first = children[0]
    text = ctx.data
    if first.type == "preproc_call" and b"pragma" in text[first.start_byte:first.end_byte] and \
            b"once" in text[first.start_byte:first.end_byte]:
        return line_end(text, first.end_byte)
    if first.type == "preproc_ifdef" and negated(first):
        guard = first.child_by_field_name("name")
        for c in first.named_children:
            if c.type == "preproc_def":
                name = c.child_by_field_name("name")
                if guard is not None and name is not None and \
                        text[name.start_byte:name.end_byte] == text[guard.start_byte:guard.end_byte]:
                    return line_end(text, c.end_byte)
                break
            if c.type != "comment" and c != guard:
                break
    return line_start(text, first.start_byte)


def line_end(data: bytes, pos: int) -> int:
    """Offset just after the line holding `pos - 1` (nodes of directives end after their newline)."""
    if pos > 0 and data[pos - 1:pos] == b"\n":
        return pos
    nl = data.find(b"\n", pos)
    return len(data) if nl < 0 else nl + 1


def line_start(data: bytes, pos: int) -> int:
    return data.rfind(b"\n", 0, pos) + 1
