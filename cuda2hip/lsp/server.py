"""`cuda2hip lsp`: a Language Server Protocol server over stdio (pygls).

Open documents are analysed on open, on change (after a short pause in typing: `DEBOUNCE`) and
on save, one at a time on a worker thread that keeps the compiled rules (projects.py). An
analysis that a newer change has made stale is skipped before it starts, and its result is
dropped if it was running: only the diagnostics of the current text are published. A running
analysis is never interrupted (it takes tens of milliseconds; stopping it half-way could leave
the engine's caches half-built).

Lifetime: the editor owns the process. It ends on `exit` (status 0 after `shutdown`, else 1),
when stdin reaches its end, and when the editor's process (`processId`) is gone. The server
never writes a file: fixes reach files only as workspace edits the client applies.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from .. import __version__
from .actions import KINDS, fill, list_actions
from ..in_memory import INTERNAL_ERROR
from .analysis import Analysis, analyse
from .diagnostics import problem
from .hover import hover
from .projects import CONFIG_NAMES, Projects

# Seconds of quiet after a change before its analysis starts: changes closer together than this
# (a paste, an editor's multi-part edit, fast keystrokes) cost one analysis. Changes while an
# analysis runs cost at most one more, of the newest text. Part of what bench/lsp_latency.py
# measures.
DEBOUNCE = 0.03
# Seconds between looks at the configuration files of the open documents (for clients that do
# not watch files for the server: Neovim on Linux, Helix).
POLL = 1.0
# Seconds between looks at whether the editor's process is still there.
PARENT_POLL = 2.0

log = logging.getLogger("cuda2hip.lsp")


class _Malformed:
    """A request whose parameters could not be read: answered with the error."""

    def __init__(self, msg_id, error: JsonRpcException):
        self.id = msg_id
        self.error = error


class Protocol(LanguageServerProtocol):
    """pygls's protocol, answering malformed requests instead of only logging them (a client
    waiting for the answer would hang)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "method" in data and isinstance(data.get("id"), (int, str)):
                return _Malformed(data["id"], exc)
            raise

    def handle_message(self, message):
        if isinstance(message, _Malformed):
            self._send_response(message.id, None, message.error.to_response_error())
            return
        if not hasattr(message, "jsonrpc"):  # JSON, but not a JSON-RPC message
            msg_id = message.get("id") if isinstance(message, dict) else None
            self._send_error(msg_id if isinstance(msg_id, (int, str)) else None, JsonRpcInvalidRequest.CODE,
                             "Invalid Request: not a JSON-RPC 2.0 message")
            return
        super().handle_message(message)

    def _send_error(self, msg_id, code: int, message: str) -> None:
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


class Document:
    """An open document: its analyses and the timer of the next one."""

    def __init__(self, uri: str, path: Path | None):
        self.uri = uri
        self.path = path  # None: not a file (untitled buffers are not analysed)
        self.version: int | None = None  # the client's, updated on the loop
        self.timer: asyncio.TimerHandle | None = None
        self.running: asyncio.Future | None = None
        self.again = False  # changed while its analysis ran
        self.latest: Analysis | None = None  # the analysis of the current version, once made
        self.waiters: list[asyncio.Future] = []
        self.closed = False


class Server(LanguageServer):
    def __init__(self, projects: Projects):
        super().__init__("cuda2hip", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=Protocol)
        self.projects = projects
        self.documents: dict[str, Document] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cuda2hip-analysis")
        self.shutting_down = False
        self.reported: set[str] = set()  # configuration errors already shown

    # -- lifetime ------------------------------------------------------------------------------
    def report_server_error(self, error: Exception, source) -> None:
        """Errors outside a request's handler: unreadable input is answered as JSON-RPC says,
        everything is logged; the server goes on."""
        if isinstance(error, JsonRpcContentModified):  # answered so; the client asks again
            return
        if isinstance(error, json.JSONDecodeError):
            self.protocol._send_error(None, -32700, f"Parse error: {error}")
        elif isinstance(error, UnicodeDecodeError):
            self.protocol._send_error(None, -32700, f"Parse error: the message is not UTF-8 ({error.reason})")
        self.log(types.MessageType.Error, f"{type(error).__name__}: {error}")

    def shutdown(self) -> None:
        # pygls waits for its threads, one of which may be blocked reading stdin: not here.
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread_pool is not None:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)
        self.worker.shutdown(wait=False, cancel_futures=True)

    def exit_now(self, code: int) -> None:
        for stream in (sys.__stdout__, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)

    def log(self, kind: types.MessageType, message: str) -> None:
        (log.error if kind == types.MessageType.Error else log.info)("%s", message)
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001 - no client to tell any more
            pass

    # -- analyses ------------------------------------------------------------------------------
    def schedule(self, doc: Document, delay: float) -> None:
        """Analyse `doc`'s current text after `delay` seconds (a later call replaces this one)."""
        if doc.timer is not None:
            doc.timer.cancel()
        loop = asyncio.get_running_loop()
        doc.timer = loop.call_later(delay, self._start, doc)

    def _start(self, doc: Document) -> None:
        doc.timer = None
        if doc.closed or self.shutting_down:
            return
        if doc.running is not None:
            doc.again = True
            return
        try:
            text_doc = self.workspace.get_text_document(doc.uri)
            version, text = text_doc.version, text_doc.source
        except Exception as exc:  # noqa: BLE001
            self.log(types.MessageType.Error, f"{doc.uri}: cannot read the document: {exc}")
            return
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        loop = asyncio.get_running_loop()
        try:
            doc.running = loop.run_in_executor(self.worker, self._analyse, doc, version, text, encoding)
        except RuntimeError:  # the worker has shut down: the server is ending
            return
        doc.running.add_done_callback(partial(self._done, doc))

    def _analyse(self, doc: Document, version, text: str, encoding) -> Analysis | None:
        """On the worker thread. None: skipped, a newer version is waiting."""
        if doc.closed or doc.version != version:
            return None
        try:
            return analyse(doc.uri, version, doc.path, text, encoding, self.projects)
        except Exception as exc:  # noqa: BLE001 - a bug of the server or the engine: logged, not fatal
            out = Analysis(doc.uri, version, text.encode("utf-8", errors="replace"), encoding)
            out.error = f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); please report it"
            out.severe = True
            out.diagnostics = [problem(out.error)]
            out.trace = traceback.format_exc()
            return out

    def _done(self, doc: Document, fut: asyncio.Future) -> None:
        doc.running = None
        a = None if fut.cancelled() else fut.result()
        if a is not None and not doc.closed and a.version == doc.version:
            doc.latest = a
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=doc.uri, diagnostics=a.diagnostics, version=a.version))
            if a.error is not None:
                self._report(doc, a)
        waiters, doc.waiters = doc.waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)
        if doc.again:
            doc.again = False
            self._start(doc)

    def _report(self, doc: Document, a: Analysis) -> None:
        self.log(types.MessageType.Error if a.severe else types.MessageType.Warning,
                 f"{doc.path}: {a.error}" + (f"\n{a.trace}" if a.trace else ""))
        if a.project is None and a.error not in self.reported:  # the configuration: say it once
            self.reported.add(a.error)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                             message=f"cuda2hip: {a.error}"))

    async def current(self, doc: Document) -> Analysis:
        """The analysis of `doc`'s current text, made now if need be."""
        for _ in range(8):
            a = doc.latest
            if a is not None and a.version == doc.version:
                return a
            if doc.closed:
                break
            if doc.running is None:
                if doc.timer is not None:
                    doc.timer.cancel()
                self._start(doc)
                if doc.running is None:
                    break
            waiter = asyncio.get_running_loop().create_future()
            doc.waiters.append(waiter)
            await waiter
        raise JsonRpcContentModified("the document changed while it was analysed; ask again")

    def recheck_changed_projects(self) -> None:
        """Analyse again the open documents whose configuration or baseline changed."""
        for doc in list(self.documents.values()):
            a = doc.latest
            if doc.path is None or a is None or doc.running is not None or doc.timer is not None:
                continue
            try:
                if self.projects.key(doc.path) != a.project_key:
                    self.schedule(doc, 0)
            except Exception as exc:  # noqa: BLE001
                self.log(types.MessageType.Error, f"{doc.path}: {exc}")

    def recheck_all(self, first: Document | None = None) -> None:
        for doc in self.documents.values():
            if doc.path is not None:
                self.schedule(doc, 0 if doc is first else DEBOUNCE)


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
        _drop_from_sys_path(folders)
        if params.process_id:
            _watch_parent(ls, params.process_id)

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
        _drop_from_sys_path(folders)
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


def _watch_parent(ls: Server, pid: int) -> None:
    """End when the editor's process is gone (an editor killed without closing our stdin). A
    process id this process cannot see (another PID namespace: a container) is not watched."""
    if not _alive(pid):
        return

    def watch():
        while _alive(pid):
            threading.Event().wait(PARENT_POLL)
        log.error("the editor's process %s is gone; exiting", pid)
        ls.exit_now(1)

    threading.Thread(target=watch, name="cuda2hip-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop_from_sys_path(folders: list[Path]) -> None:
    """Nothing is ever imported from the working directory or a workspace folder."""
    unsafe = {os.getcwd(), *(str(f) for f in folders)}
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) not in unsafe]


def serve(projects: Projects) -> None:
    """Serve over stdin/stdout until the client exits; never returns."""
    _drop_from_sys_path([])
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="cuda2hip lsp: %(levelname)s: %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Only the protocol writes to stdout: anything else printed would corrupt it.
    sys.stdout = sys.stderr
    server = build(projects)
    server.start_io(stdin, stdout)
    # stdin ended (or the loop stopped): the client is gone.
    server.exit_now(0 if server.shutting_down else 1)
