"""The LSP messages the server answers (pygls features), registered by `build`."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified
from pygls.uris import to_fs_path

from .actions import KINDS, fill, list_actions
from .analysis import Analysis
from .hover import hover
from .lifetime import drop_from_sys_path, watch_parent
from .projects import CONFIG_NAMES, Projects
from .server import DEBOUNCE, POLL, Document, Server


def _path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs).absolute() if fs else None


def _offset_range(a: Analysis, r: types.Range) -> tuple[int, int]:
    start, end = a.index.offset(r.start), a.index.offset(r.end)
    return min(start, end), max(start, end)


def build(projects: Projects) -> Server:
    """The server, its handlers registered."""
    server = Server(projects)

    @server.feature(types.INITIALIZE)
    def initialize(ls: Server, params: types.InitializeParams):
        folders = [p for p in (_path(f.uri) for f in params.workspace_folders or []) if p is not None]
        root = _path(params.root_uri) if params.root_uri else (Path(params.root_path) if params.root_path else None)
        if not folders and root is not None:
            folders = [root]
        ls.projects.set_folders(folders)
        drop_from_sys_path(folders)
        if params.process_id:
            watch_parent(ls, params.process_id)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: Server, params: types.InitializedParams):
        caps = ls.client_capabilities
        watch = caps.workspace.did_change_watched_files if caps.workspace else None
        if watch is not None and watch.dynamic_registration:
            patterns = [f"**/{name}" for name in CONFIG_NAMES]
            if ls.projects.baseline is not None:
                patterns.append(f"**/{ls.projects.baseline.name}")
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=p) for p in patterns])
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[
                    types.Registration(id="cuda2hip-configuration", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                       register_options=options)]))
            except Exception as exc:  # noqa: BLE001 - the poll still notices changes
                ls.log(types.MessageType.Warning, f"the client did not watch the configuration files: {exc}")
        asyncio.get_running_loop().call_later(POLL, _poll, ls)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: Server, params):
        ls.shutting_down = True
        for doc in ls.documents.values():
            if doc.timer is not None:
                doc.timer.cancel()

    @server.feature(types.EXIT)
    def exit_(ls: Server, params):
        ls.exit_now(0 if ls.shutting_down else 1)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Server, params: types.DidOpenTextDocumentParams):
        uri = params.text_document.uri
        doc = ls.documents.get(uri) or Document(uri, _path(uri))
        ls.documents[uri] = doc
        doc.version = params.text_document.version
        if doc.path is not None:
            ls.schedule(doc, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: types.DidChangeTextDocumentParams):
        doc = ls.documents.get(params.text_document.uri)
        if doc is None:
            return
        doc.version = params.text_document.version
        if doc.path is not None:
            ls.schedule(doc, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Server, params: types.DidSaveTextDocumentParams):
        # The file on disk changed: the headers other open files include may be this one.
        doc = ls.documents.get(params.text_document.uri)
        if doc is not None and doc.path is not None and doc.path.name in CONFIG_NAMES:
            ls.projects.forget()
        ls.recheck_all(first=doc)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: types.DidCloseTextDocumentParams):
        doc = ls.documents.pop(params.text_document.uri, None)
        if doc is None:
            return
        doc.closed = True
        if doc.timer is not None:
            doc.timer.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: Server, params: types.DidChangeWatchedFilesParams):
        ls.projects.forget()
        ls.recheck_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: Server, params: types.DidChangeConfigurationParams):
        """The server takes no settings from the editor (only the command's options and the
        configuration files): nothing to do, but nothing to warn about either."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: Server, params: types.DidChangeWorkspaceFoldersParams):
        folders = [p for p in (_path(f.uri) for f in ls.workspace.folders.values()) if p is not None]
        ls.projects.set_folders(folders)
        drop_from_sys_path(folders)
        ls.projects.forget()
        ls.recheck_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True))
    async def code_action(ls: Server, params: types.CodeActionParams):
        doc = ls.documents.get(params.text_document.uri)
        if doc is None or doc.path is None:
            return None
        a = await ls.current(doc)
        start, end = _offset_range(a, params.range)
        caps = ls.client_capabilities.text_document
        resolve = bool(caps and caps.code_action and caps.code_action.resolve_support
                       and "edit" in caps.code_action.resolve_support.properties)
        return await _on_worker(ls, list_actions, a, start, end, params.context, resolve=resolve,
                                versioned=_versioned(ls))

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: Server, action: types.CodeAction):
        data = action.data if isinstance(action.data, dict) else {}
        doc = ls.documents.get(data.get("uri", ""))
        if doc is None:
            raise JsonRpcContentModified("the document is no longer open")
        a = await ls.current(doc)
        if a.version != data.get("version"):
            raise JsonRpcContentModified("the document changed since the actions were listed; ask again")
        got = await _on_worker(ls, fill, action, a, _versioned(ls))
        if got is None:
            raise JsonRpcContentModified("the action no longer applies")
        return got

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: Server, params: types.HoverParams):
        doc = ls.documents.get(params.text_document.uri)
        if doc is None or doc.path is None:
            return None
        a = await ls.current(doc)
        return hover(a, a.index.offset(params.position))

    return server


def _versioned(ls: Server) -> bool:
    caps = ls.client_capabilities.workspace
    edit = caps.workspace_edit if caps else None
    return bool(edit and edit.document_changes)


async def _on_worker(ls: Server, fn, *args, **kwargs):
    """`fn` on the analysis thread (it runs the engine, which serves one caller at a time)."""
    return await asyncio.get_running_loop().run_in_executor(ls.worker, partial(fn, *args, **kwargs))


def _poll(ls: Server) -> None:
    if ls.shutting_down:
        return
    try:
        ls.recheck_changed_projects()
    finally:
        asyncio.get_running_loop().call_later(POLL, _poll, ls)
