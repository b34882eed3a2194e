"""tests/harness/fetch_cuda_library_headers.py reads only the headers out of a wheel, with HTTP
range requests, and falls back to a whole download where ranges are not served (checked here
against a local server, so it runs offline)."""

from __future__ import annotations

import importlib.util
import os
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("fetch_cuda_library_headers",
                                              ROOT / "tests" / "harness" / "fetch_cuda_library_headers.py")
fetch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fetch)

HEADERS = {
    "nvidia/cu13/include/cublas_v2.h": b"#pragma once\nint cublasCreate(void**);\n",
    "nvidia/cu13/include/crt/detail.hpp": b"// nested header\n",
}


@pytest.fixture
def wheel(tmp_path):
    path = tmp_path / "nvidia_fake-1.0-py3-none-manylinux_2_27_x86_64.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in HEADERS.items():
            zf.writestr(name, data)
        # a large library, stored uncompressed: what range reads must not download
        zf.writestr(zipfile.ZipInfo("nvidia/cu13/lib/libcublas.so.13"), os.urandom(6 * fetch.BLOCK))
        zf.writestr("nvidia/cu13/include/README", b"not a header\n")
        zf.writestr("nvidia_fake-1.0.dist-info/METADATA", b"Name: nvidia-fake\n")
    return path


def _serve(payload: bytes, ranges: bool):
    served = {"bytes": 0, "requests": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _headers(self, status, length, extra=()):
            self.send_response(status)
            self.send_header("Content-Length", str(length))
            if ranges:
                self.send_header("Accept-Ranges", "bytes")
            for key, value in extra:
                self.send_header(key, value)
            self.end_headers()

        def do_HEAD(self):
            self._headers(200, len(payload))

        def do_GET(self):
            served["requests"] += 1
            wanted = self.headers.get("Range")
            if ranges and wanted:
                start, end = (int(x) for x in wanted.removeprefix("bytes=").split("-"))
                body = payload[start:end + 1]
                self._headers(206, len(body), [("Content-Range", f"bytes {start}-{end}/{len(payload)}")])
            else:
                body = payload
                self._headers(200, len(body))
            served["bytes"] += len(body)
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/wheel.whl", served


@pytest.mark.parametrize("ranges", [True, False])
def test_only_headers_are_extracted(wheel, tmp_path, ranges):
    payload = wheel.read_bytes()
    server, url, served = _serve(payload, ranges)
    try:
        count = fetch.extract_headers(url, tmp_path / "out")
    finally:
        server.shutdown()
    got = {p.relative_to(tmp_path / "out").as_posix(): p.read_bytes()
           for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert got == {"include/cublas_v2.h": HEADERS["nvidia/cu13/include/cublas_v2.h"],
                   "include/crt/detail.hpp": HEADERS["nvidia/cu13/include/crt/detail.hpp"]}
    assert count == 2
    if ranges:
        # the central directory and the headers' blocks, never the library in between
        assert served["bytes"] < len(payload) / 2
    else:
        assert served["bytes"] == len(payload)
