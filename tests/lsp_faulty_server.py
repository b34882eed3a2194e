"""`cuda2hip lsp` with two faults injected (tests/test_lsp.py): analysing a text that holds
ENGINE_FAULT raises in the CUDA frontend (a bug `check` would report as an internal error), and
one that holds SERVER_FAULT raises in the server's own analysis step."""

import sys

from cuda2hip.engine.frontends.cuda import CudaFrontend
from cuda2hip.lsp import analysis, server

_lint = CudaFrontend.lint
_analyse = analysis.analyse


def lint(self, source, *args, **kwargs):
    if b"ENGINE_FAULT" in source.data:
        raise RuntimeError("fault injected in the engine")
    return _lint(self, source, *args, **kwargs)


def analyse(uri, version, path, text, *args):
    if "SERVER_FAULT" in text:
        raise RuntimeError("fault injected in the server")
    return _analyse(uri, version, path, text, *args)


CudaFrontend.lint = lint
server.analyse = analyse

from cuda2hip.cli.commands import main  # noqa: E402

sys.argv[0] = "cuda2hip"
main(["lsp"])
