"""Drive `cuda2hip lsp` from pytest-lsp's client as an editor would: start it over stdio with a
real editor's capabilities, open and edit documents (incremental changes), wait for the
diagnostics of a version, apply the workspace edits of code actions to the text it holds."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

TIMEOUT = 60  # seconds; a first analysis compiles the rules (well under a second here)
_BREAK = re.compile(r"\r\n|\r|\n")


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def index_of(text: str, pos: types.Position, encoding: str) -> int:
    """The str index of an LSP position in `text` (counted in `encoding`'s units)."""
    starts = _line_starts(text)
    if pos.line >= len(starts):
        return len(text)
    i = starts[pos.line]
    end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    units = 0
    while i < end and text[i] not in "\r\n" and units < pos.character:
        ch = text[i]
        units += {"utf-8": len(ch.encode("utf-8")), "utf-32": 1}.get(encoding, 2 if ord(ch) > 0xFFFF else 1)
        i += 1
    return i


def position_of(text: str, index: int, encoding: str) -> types.Position:
    starts = _line_starts(text)
    line = max(n for n, s in enumerate(starts) if s <= index)
    chunk = text[starts[line]:index]
    units = {"utf-8": len(chunk.encode("utf-8")), "utf-32": len(chunk)}.get(encoding, len(chunk.encode("utf-16-le")) // 2)
    return types.Position(line=line, character=units)


class Editor:
    def __init__(self, client: LanguageClient, encoding: str, process):
        self.client = client
        self.encoding = encoding
        self.process = process
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.published: list[types.PublishDiagnosticsParams] = []
        self.arrived = asyncio.Event()
        self.messages: list = []  # every message from the server, as received (before handling)

        handle = client.protocol.handle_message

        def record(message):
            self.messages.append(message)
            if getattr(message, "method", None) == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
                self.published.append(message.params)
            try:
                return handle(message)  # (records log messages, ...)
            finally:
                self.arrived.set()

        client.protocol.handle_message = record

    async def wait(self, predicate, timeout: float = TIMEOUT):
        """The first thing `predicate()` returns that is not None, waiting for messages."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            got = predicate()
            if got is not None:
                return got
            self.arrived.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError("nothing arrived in time")
            try:
                await asyncio.wait_for(self.arrived.wait(), left)
            except TimeoutError:
                pass

    async def diagnostics(self, uri: str, version: int | None = None) -> list[types.Diagnostic]:
        """The diagnostics published for `uri` at `version` (default: its current one)."""
        version = self.versions[uri] if version is None else version

        def found():
            for p in reversed(self.published):
                if p.uri == uri and p.version == version:
                    return p.diagnostics
            return None

        return await self.wait(found)

    async def open(self, path: Path, text: str, language: str = "cuda") -> list[types.Diagnostic]:
        uri = path.as_uri()
        self.texts[uri] = text
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return await self.diagnostics(uri)

    def edit(self, uri: str, edits: list[types.TextEdit]) -> None:
        """Apply `edits` (ranges of the current text) and tell the server, as incremental changes."""
        text = self.texts[uri]
        changes = []
        placed = sorted(((index_of(text, e.range.start, self.encoding), index_of(text, e.range.end, self.encoding), e)
                         for e in edits), key=lambda t: (t[0], t[1]), reverse=True)
        for start, end, e in placed:
            # each change is in the coordinates of the text the changes before it left
            changes.append(types.TextDocumentContentChangePartial(range=types.Range(
                start=position_of(text, start, self.encoding), end=position_of(text, end, self.encoding)),
                text=e.new_text))
            text = text[:start] + e.new_text + text[end:]
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=changes))

    def replace_all(self, uri: str, text: str) -> None:
        old = self.texts[uri]
        self.edit(uri, [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                          end=position_of(old, len(old), self.encoding)),
                                       new_text=text)])

    def apply(self, edit: types.WorkspaceEdit) -> str:
        """Apply a workspace edit of one document; its new text."""
        if edit.document_changes:
            (change,) = edit.document_changes
            uri, edits = change.text_document.uri, change.edits
            assert change.text_document.version == self.versions[uri], "an edit for another version"
        else:
            ((uri, edits),) = edit.changes.items()
        self.edit(uri, list(edits))
        return self.texts[uri]

    async def actions(self, uri: str, rng: types.Range, diagnostics=(), only=None) -> list[types.CodeAction]:
        got = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))
        return [a for a in got or [] if isinstance(a, types.CodeAction)]

    async def resolved(self, action: types.CodeAction) -> types.CodeAction:
        if action.edit is not None:
            return action
        return await self.client.code_action_resolve_async(action)


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "cuda2hip", "lsp", *args]


async def start(workspace: Path, client_spec: str, *args: str, command: list[str] | None = None,
                cache: Path | None = None) -> Editor:
    """A client with the capabilities of `client_spec` (pytest-lsp's records of real editors),
    connected to a server started for `workspace` (its folder and working directory)."""
    client = make_test_lsp_client()
    env = dict(os.environ)
    if cache is not None:
        env["CUDA2HIP_CACHE_DIR"] = str(cache)
    await client.start_io(*(command or server_command(*args)), env=env, cwd=str(workspace))
    caps = client_capabilities(client_spec)
    editor = Editor(client, "utf-16", client._server)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)]))
    editor.encoding = result.capabilities.position_encoding or "utf-16"
    return editor


async def stop(editor: Editor) -> int:
    """Shut the server down as an editor does; its exit status."""
    await editor.client.shutdown_session()
    await editor.client.stop()
    return editor.process.returncode
