"""`cuda2hip lsp` end to end: pytest-lsp's client starts the server over stdio, with the
capabilities of real editors (VS Code: UTF-16, edits resolved later; Neovim 0.11: UTF-8;
Emacs: UTF-32, edits made when listed), and drives it as an editor would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_support import Editor, start, stop

# a real client drives `cuda2hip lsp`, a process of its own, over stdio
pytestmark = pytest.mark.integration

# The async tests share the event loop of the module's servers.
on_module_loop = pytest.mark.asyncio(loop_scope="module")

KERNEL = """\
#include <cuda_runtime.h>

__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }

int main() {
  float *d;
  cudaMalloc(&d, 64 * sizeof(float));
  scale<<<1, 64>>>(d, 2.0f);
  cudaFree(d);
  return 0;
}
"""
CMAKE = """\
cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX CUDA)
add_library(demo STATIC demo.cpp)
"""


def _find(diagnostics, code: str, line: int | None = None) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.code == code and (line is None or d.range.start.line == line)]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vscode(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("vscode")
    editor = await start(workspace, "visual-studio-code", cache=tmp_path_factory.mktemp("cache"))
    editor.workspace = workspace
    yield editor
    assert await stop(editor) == 0


@on_module_loop
async def test_cu_finding_fix_and_fixed(vscode: Editor):
    path = vscode.workspace / "kernel.cu"
    diags = await vscode.open(path, KERNEL)
    assert vscode.encoding == "utf-16"
    (malloc,) = _find(diags, "HIP101", line=6)
    assert (malloc.range.start.character, malloc.range.end.character) == (2, 12)
    assert malloc.severity == types.DiagnosticSeverity.Warning
    assert malloc.source == "cuda2hip" and "hipMalloc" in malloc.message
    assert malloc.code_description.href.endswith("HIP101.md")
    actions = await vscode.actions(path.as_uri(), malloc.range, [malloc])
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "hipMalloc" in a.title)
    assert fix.is_preferred and fix.edit is None  # VS Code resolves the edit when it is chosen
    fix = await vscode.resolved(fix)
    text = vscode.apply(fix.edit)
    assert "  hipMalloc(&d, 64 * sizeof(float));" in text and "cudaFree(d)" in text
    after = await vscode.diagnostics(path.as_uri())
    assert not _find(after, "HIP101", line=6) and _find(after, "HIP101", line=8)


@on_module_loop
async def test_cmake_finding_fix_and_fixed(vscode: Editor):
    path = vscode.workspace / "CMakeLists.txt"
    diags = await vscode.open(path, CMAKE, language="cmake")
    (lang,) = _find(diags, "HIP701")
    assert lang.range == types.Range(start=types.Position(line=1, character=27), end=types.Position(line=1, character=31))
    actions = await vscode.actions(path.as_uri(), lang.range, [lang])
    fix = await vscode.resolved(next(a for a in actions if "HIP701" in a.title and a.title.startswith("Replace")))
    assert "project(demo LANGUAGES CXX HIP)" in vscode.apply(fix.edit)
    assert not _find(await vscode.diagnostics(path.as_uri()), "HIP701")


PYTHON = """\
import cupy as cp

kernel = cp.RawKernel(r'''
extern "C" __global__ void scale(float *x) {
    float *p; cudaMalloc(&p, 4);
}
''', "scale")
"""


@on_module_loop
async def test_make_and_python_files(vscode: Editor):
    make = vscode.workspace / "Makefile"
    diags = await vscode.open(make, "all:\n\tnvcc -o app main.cu -lcudart\n", language="make")
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags] == [("HIP751", 1, 1),
                                                                                      ("HIP753", 1, 21)]
    # CUDA source in a Python string: its finding is suppressed inside the kernel's text (a `#`
    # comment there would be the string's, a line above would be inside the string too).
    py = vscode.workspace / "k.py"
    (malloc,) = await vscode.open(py, PYTHON, language="python")
    assert (malloc.code, malloc.range.start.line, malloc.range.start.character) == ("HIP101", 4, 14)
    actions = await vscode.actions(py.as_uri(), malloc.range, [malloc])
    suppress = await vscode.resolved(next(a for a in actions if a.title == "Suppress HIP101 on this line"))
    assert "    float *p; cudaMalloc(&p, 4);  // cuda2hip: ignore[HIP101]\n" in vscode.apply(suppress.edit)
    assert not await vscode.diagnostics(py.as_uri())


@on_module_loop
async def test_hover_shows_the_rule_docs(vscode: Editor, tmp_path):
    from cuda2hip.engine.engine import load_all_rules
    from cuda2hip.rulebook.docs import rule_markdown
    from cuda2hip.settings import Settings

    path = vscode.workspace / "hover.cu"
    diags = await vscode.open(path, KERNEL)
    (free,) = _find(diags, "HIP101", line=8)
    got = await vscode.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line=8, character=4)))
    rule = next(r for r in load_all_rules(Settings(root=tmp_path)) if r.code == "HIP101")
    assert got.contents.kind == types.MarkupKind.Markdown
    assert got.contents.value == rule_markdown(rule).rstrip("\n")  # what `cuda2hip explain HIP101` prints
    assert got.range == free.range
    nothing = await vscode.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line=1, character=0)))
    assert nothing is None


@on_module_loop
async def test_suppress_on_this_line(vscode: Editor):
    path = vscode.workspace / "suppress.cu"
    text = KERNEL.replace("  cudaFree(d);", "  cudaFree(d);  // done")
    diags = await vscode.open(path, text)
    (free,) = _find(diags, "HIP101", line=8)
    actions = await vscode.actions(path.as_uri(), free.range, [free])
    suppress = await vscode.resolved(next(a for a in actions if a.title == "Suppress HIP101 on this line"))
    new = vscode.apply(suppress.edit)
    assert "  cudaFree(d);  // done  // cuda2hip: ignore[HIP101]\n" in new
    after = await vscode.diagnostics(path.as_uri())
    assert not _find(after, "HIP101", line=8) and _find(after, "HIP101", line=6)
    assert not _find(after, "HIP001")  # the directive is used
    # A directive already on the line takes the code.
    vscode.replace_all(path.as_uri(), new.replace("cudaMalloc(&d, 64 * sizeof(float));",
                                                  "cudaMalloc(&d, 64 * sizeof(float));  // cuda2hip: ignore[HIP102]"))
    diags = await vscode.diagnostics(path.as_uri())
    (malloc,) = _find(diags, "HIP101", line=6)
    assert _find(diags, "HIP001", line=6)  # HIP102 suppresses nothing there
    actions = await vscode.actions(path.as_uri(), malloc.range, [malloc])
    suppress = await vscode.resolved(next(a for a in actions if a.title == "Suppress HIP101 on this line"))
    assert "// cuda2hip: ignore[HIP102, HIP101]\n" in vscode.apply(suppress.edit)
    assert not _find(await vscode.diagnostics(path.as_uri()), "HIP101")


@on_module_loop
async def test_suppress_offered_only_where_it_works(vscode: Editor):
    # In a macro's continued line no comment suppresses (a comment after the backslash would end
    # the macro; the engine does not read comments inside macro bodies): not offered. On the
    # `#define` line itself, a directive above it does.
    path = vscode.workspace / "macro.cu"
    text = "#include <hip/hip_runtime.h>\n#define FREE(p) \\\n  cudaFree(p)\n#define SYNC() cudaDeviceSynchronize()\n"
    diags = await vscode.open(path, text)
    (free,) = _find(diags, "HIP101", line=2)
    titles = [a.title for a in await vscode.actions(path.as_uri(), free.range, [free])]
    assert "Rename to `hipFree` (HIP101)" in titles and "Suppress HIP101 on this line" not in titles
    (sync,) = _find(diags, "HIP101", line=3)
    actions = await vscode.actions(path.as_uri(), sync.range, [sync])
    suppress = await vscode.resolved(next(a for a in actions if a.title == "Suppress HIP101 on this line"))
    vscode.apply(suppress.edit)
    after = await vscode.diagnostics(path.as_uri())
    assert not [d for d in after if "cudaDeviceSynchronize" in d.message] and _find(after, "HIP101")


@on_module_loop
async def test_fix_all_safe_findings_writes_nothing(vscode: Editor):
    path = vscode.workspace / "all.cu"
    path.write_text(KERNEL)
    before = {p: p.read_bytes() for p in vscode.workspace.rglob("*") if p.is_file()}
    diags = await vscode.open(path, KERNEL)
    assert _find(diags, "HIP100") and len(_find(diags, "HIP101")) == 2
    actions = await vscode.actions(path.as_uri(), types.Range(start=types.Position(line=0, character=0),
                                                              end=types.Position(line=0, character=0)),
                                   only=[types.CodeActionKind.SourceFixAll])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.cuda2hip"
    new = vscode.apply((await vscode.resolved(fix_all)).edit)
    assert "#include <hip/hip_runtime.h>" in new and "hipMalloc(&d" in new and "hipFree(d)" in new
    assert not [d for d in await vscode.diagnostics(path.as_uri()) if d.code in ("HIP100", "HIP101")]
    # the edits were the client's to apply: no file written, none added
    assert {p: p.read_bytes() for p in vscode.workspace.rglob("*") if p.is_file()} == before
    # nothing left to fix: no such action
    assert not await vscode.actions(path.as_uri(), types.Range(start=types.Position(line=0, character=0),
                                                               end=types.Position(line=0, character=0)),
                                    only=[types.CodeActionKind.SourceFixAll])


@on_module_loop
async def test_a_burst_of_changes_is_analysed_once(vscode: Editor):
    path = vscode.workspace / "burst.cu"
    await vscode.open(path, KERNEL)
    first = len(vscode.published)
    for n in range(6):  # keystrokes closer together than the debounce
        vscode.edit(path.as_uri(), [types.TextEdit(range=types.Range(start=types.Position(line=1, character=0),
                                                                      end=types.Position(line=1, character=0)),
                                                   new_text=f"// {n}\n")])
    assert _find(await vscode.diagnostics(path.as_uri()), "HIP101")
    assert [p.version for p in vscode.published[first:] if p.uri == path.as_uri()] == [vscode.versions[path.as_uri()]]


@on_module_loop
async def test_non_ascii_lines_in_utf16(vscode: Editor):
    # "é" is one UTF-16 unit and two UTF-8 bytes; "😀" two units and four bytes.
    path = vscode.workspace / "wide.cu"
    text = "#include <hip/hip_runtime.h>\nvoid f(float *p) { /* é😀 */ cudaFree(p); }\n"
    diags = await vscode.open(path, text)
    (free,) = _find(diags, "HIP101")
    col = text.splitlines()[1].index("cudaFree")
    assert free.range.start == types.Position(line=1, character=col + 1)  # the emoji counts twice
    fix = await vscode.resolved(next(a for a in await vscode.actions(path.as_uri(), free.range, [free])
                                     if "hipFree" in a.title))
    assert vscode.apply(fix.edit) == text.replace("cudaFree", "hipFree")


@on_module_loop
async def test_malformed_messages_get_errors_and_the_server_goes_on(vscode: Editor):
    path = vscode.workspace / "after.cu"
    writer = vscode.client.protocol.writer
    for body in (
        b'{"jsonrpc": "2.0", "id": 4242, "method": "textDocument/hover", "params": {"textDocument": 5}}',
        b'{"jsonrpc": "2.0", "id": 99, "method": ',  # not JSON
        b'[1, 2]',  # JSON, not a JSON-RPC message
    ):
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def errors():
        got = [(m.id, m.error.code) for m in vscode.messages if getattr(m, "error", None) is not None]
        return got if len(got) >= 3 else None

    # invalid params, answered with the request's id; a parse error and an invalid request, whose
    # ids cannot be known (null)
    assert sorted(await vscode.wait(errors), key=lambda e: e[1]) == [(None, -32700), (4242, -32602), (None, -32600)]
    # an unknown method
    with pytest.raises(JsonRpcException) as err:
        await vscode.client.protocol.send_request_async("cuda2hip/nothing", {})
    assert err.value.code == -32601
    assert _find(await vscode.open(path, KERNEL), "HIP101")


@on_module_loop
async def test_configuration_reload(vscode: Editor):
    project = vscode.workspace / "configured"
    project.mkdir()
    path = project / "k.cu"
    assert _find(await vscode.open(path, KERNEL), "HIP101")
    config = project / "cuda2hip.toml"
    config.write_text('ignore = ["HIP101"]\n')
    vscode.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Created)]))

    def last():
        return [p for p in vscode.published if p.uri == path.as_uri()][-1].diagnostics

    await vscode.wait(lambda: True if last() and not _find(last(), "HIP101") else None)
    # Without a watcher's notification too (Neovim on Linux, Helix): the server looks itself.
    config.write_text('ignore = ["HIP100"]\n')
    await vscode.wait(lambda: True if _find(last(), "HIP101") and not _find(last(), "HIP100") else None, timeout=30)
    # A broken configuration: said on the file (and shown to the user once).
    config.write_text('ignore = "HIP100"\n')
    broken = await vscode.wait(lambda: next((d for d in last() if "cuda2hip.toml" in d.message), None), timeout=30)
    assert broken.severity == types.DiagnosticSeverity.Error and len(last()) == 1
    assert await vscode.wait(lambda: [m for m in vscode.client.messages if "cuda2hip.toml" in m.message] or None)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def emacs(tmp_path_factory):
    """Emacs (eglot) capabilities: UTF-32 preferred, no resolving of code actions; with a baseline."""
    workspace = tmp_path_factory.mktemp("emacs")
    (workspace / "old.cu").write_text(KERNEL)
    subprocess.run([sys.executable, "-m", "cuda2hip", "check", "--write-baseline", "baseline.json", "old.cu"],
                   cwd=workspace, check=True, capture_output=True)
    editor = await start(workspace, "emacs", "--baseline", "baseline.json", cache=tmp_path_factory.mktemp("cache"))
    editor.workspace = workspace
    yield editor
    assert await stop(editor) == 0


@on_module_loop
async def test_baseline_and_eager_actions_in_utf32(emacs: Editor):
    assert emacs.encoding == "utf-32"
    # the findings the baseline lists are not shown; a new one is
    old = emacs.workspace / "old.cu"
    text = KERNEL.replace("  return 0;", "  cudaDeviceSynchronize(); /* é😀 */ cudaDeviceReset();\n  return 0;")
    diags = await emacs.open(old, text)
    assert [d.code for d in diags] == ["HIP101", "HIP101"], diags
    sync, reset = diags
    line = text.splitlines()[9]
    assert reset.range.start == types.Position(line=9, character=line.index("cudaDeviceReset"))  # code points
    actions = await emacs.actions(old.as_uri(), reset.range, [reset])
    assert all(a.edit is not None for a in actions)  # eglot cannot resolve: edits come with the list
    fix = next(a for a in actions if "hipDeviceReset" in a.title)
    assert emacs.apply(fix.edit) == text.replace("cudaDeviceReset", "hipDeviceReset")
    assert [d.code for d in await emacs.diagnostics(old.as_uri())] == ["HIP101"]


@on_module_loop
async def test_neovim_utf8_positions(tmp_path, tmp_path_factory):
    editor = await start(tmp_path, "neovim@v0.11.0", cache=tmp_path_factory.mktemp("cache"))
    try:
        assert editor.encoding == "utf-8"
        text = "#include <hip/hip_runtime.h>\n// é😀\nvoid f(float *p) { /* é😀 */ cudaFree(p); }\n"
        (free,) = _find(await editor.open(tmp_path / "u.cu", text), "HIP101")
        line = text.splitlines()[2]
        assert free.range.start == types.Position(line=2, character=len(line[:line.index("cudaFree")].encode()))
    finally:
        assert await stop(editor) == 0


@on_module_loop
async def test_an_analysis_that_fails_is_logged_and_the_server_goes_on(tmp_path, tmp_path_factory):
    command = [sys.executable, str(Path(__file__).with_name("lsp_faulty_server.py"))]
    editor = await start(tmp_path, "visual-studio-code", command=command, cache=tmp_path_factory.mktemp("cache"))
    try:
        for word in ("ENGINE_FAULT", "SERVER_FAULT"):  # in the engine (as `check` meets it), in the server
            path = tmp_path / f"{word}.cu"
            (problem,) = await editor.open(path, KERNEL + f"// {word}\n")
            assert problem.severity == types.DiagnosticSeverity.Error and "internal error" in problem.message
            assert await editor.wait(lambda: [m for m in editor.client.log_messages
                                              if m.type == types.MessageType.Error and word in m.message] or None)
            editor.replace_all(path.as_uri(), KERNEL)  # the same document, fixed
            assert _find(await editor.diagnostics(path.as_uri()), "HIP101")
    finally:
        assert await stop(editor) == 0


class _Raw:
    """The server as a process, driven by hand over its pipes, in the workspace as working
    directory. Started as the `cuda2hip` command starts (`-P`: no working directory on the
    import path, where `python -m` would put it before cuda2hip runs)."""

    def __init__(self, workspace: Path, editor_pid: int | None = None):
        self.proc = subprocess.Popen([sys.executable, "-P", "-m", "cuda2hip", "lsp"], cwd=workspace,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": editor_pid or os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}}})

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, self.proc.stderr.read().decode()
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def until(self, predicate) -> dict:
        while not predicate(msg := self.receive()):
            pass
        return msg


def test_the_server_ends_with_its_client_and_imports_nothing_from_the_workspace(tmp_path):
    # The workspace (the server's working directory) holds modules the server imports by name.
    for name in ("pygls", "lsprotocol", "click", "yaml", "msgspec", "attrs", "cattrs", "tree_sitter"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('imported from the workspace')\n")
    uri = (tmp_path / "k.cu").as_uri()
    # stdin's end (the editor gone without a word): the server ends.
    raw = _Raw(tmp_path)
    assert raw.until(lambda m: m.get("id") == 1)["result"]["serverInfo"]["name"] == "cuda2hip"
    raw.proc.stdin.close()
    assert raw.proc.wait(30) == 1  # no `shutdown` came first
    # the editor's process gone (killed), its pipes still open
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    raw = _Raw(tmp_path, editor.pid)
    raw.until(lambda m: m.get("id") == 1)
    editor.kill()
    editor.wait()
    assert raw.proc.wait(30) == 1
    # shutdown and exit
    raw = _Raw(tmp_path)
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "cuda", "version": 1, "text": KERNEL}}})
    published = raw.until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    assert {d["code"] for d in published["params"]["diagnostics"]} == {"HIP100", "HIP101"}
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri}, "position": {"line": 6, "character": 3}}})
    assert "cuda-runtime-api" in raw.until(lambda m: m.get("id") == 2)["result"]["contents"]["value"]
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    assert raw.until(lambda m: m.get("id") == 3)["result"] is None
    raw.send({"jsonrpc": "2.0", "method": "exit"})
    assert raw.proc.wait(30) == 0
