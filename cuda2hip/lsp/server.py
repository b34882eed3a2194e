"""`cuda2hip lsp`: a Language Server Protocol server over stdio (pygls).

Open documents are analysed on open, on change (after a short pause in typing: `DEBOUNCE`) and
on save, one at a time on a worker thread that keeps the compiled rules (projects.py). An
analysis that a newer change has made stale is skipped before it starts, and its result is
dropped if it was running: only the diagnostics of the current text are published. A running
analysis is never interrupted (it takes tens of milliseconds; stopping it half-way could leave
the engine's caches half-built).

The handlers are in handlers.py, the process's lifetime in lifetime.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..run.in_memory import INTERNAL_ERROR
from .analysis import Analysis, analyse
from .diagnostics import problem
from .projects import Projects
from .protocol import Protocol

# Seconds of quiet after a change before its analysis starts: changes closer together than this
# (a paste, an editor's multi-part edit, fast keystrokes) cost one analysis. Changes while an
# analysis runs cost at most one more, of the newest text. Part of what bench/lsp_latency.py
# measures.
DEBOUNCE = 0.03
# Seconds between looks at the configuration files of the open documents (for clients that do
# not watch files for the server: Neovim on Linux, Helix).
POLL = 1.0

log = logging.getLogger("cuda2hip.lsp")


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
        self.error: str | None = None  # why the last analysis failed (logged once, not per keystroke)


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
            self.protocol.send_parse_error(str(error))
        elif isinstance(error, UnicodeDecodeError):
            self.protocol.send_parse_error(f"the message is not UTF-8 ({error.reason})")
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
            if a.error is not None and a.error != doc.error:
                self._report(doc, a)
            doc.error = a.error
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
