"""Text edits that turn one content of a document into another: what a quick fix, "fix all" or
a suppression sends the client (the server never writes a file; the client applies the edits).

The edits are found by a line diff and trimmed to the characters that differ, so that the
client keeps its cursor, marks and folds outside them. Edits never split a character or a CRLF."""

from __future__ import annotations

import difflib

from lsprotocol import types

from .positions import LineIndex


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def byte_edits(old: bytes, new: bytes) -> list[tuple[int, int, str]]:
    """(start, end, text): replace bytes [start, end) of `old` with `text`; applied together
    (offsets into `old`, in order, never overlapping) they make `new`."""
    if old == new:
        return []
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        was = b"".join(a[i1:i2]).decode("utf-8", errors="replace")
        now = b"".join(b[j1:j2]).decode("utf-8", errors="replace")
        head = _common_prefix(was, now)
        tail = _common_prefix(was[head:][::-1], now[head:][::-1])
        # never end an edit between the CR and LF of a line break
        if head and was[head - 1] == "\r" and was[head:head + 1] == "\n":
            head -= 1
        if tail and was[len(was) - tail - 1:len(was) - tail] == "\r" and was[len(was) - tail] == "\n":
            tail -= 1
        start = starts[i1] + len(was[:head].encode("utf-8"))
        end = starts[i2] - len(was[len(was) - tail:].encode("utf-8"))
        out.append((start, end, now[head:len(now) - tail]))
    return out


def text_edits(index: LineIndex, new: bytes) -> list[types.TextEdit]:
    """The edits that make `new` of the text `index` holds."""
    return [types.TextEdit(range=index.range(start, end), new_text=text)
            for start, end, text in byte_edits(index.data, new)]


def workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    """`edits` of one document; `versioned` (the client takes `documentChanges`): tied to the
    version they were made for, so that a client refuses them once the text has changed."""
    if versioned:
        doc = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=doc, edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})
