"""Huge files. Memory (docs/batch.md, "Memory"): `fix` of one large generated CUDA file peaks
within MEMORY_BASE + MEMORY_PER_BYTE x its size. The syntax tree alone takes about 35 bytes per
source byte; the budget leaves room for the findings (this file has one every ~55 bytes) and the
fix loop's second lint, but not for two trees at once or per-occurrence copies. A resource bound,
measured as the peak RSS of a fresh process (its own RUSAGE_CHILDREN, so nothing else counts).
File-scope declarations are looked up in a table per scope (a scan of every earlier sibling at
each member access made such a file quadratic: 81 s of CPU for 2 MB), which finds what the scan
found."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from cuda2hip.lang import parse as parsing
from cuda2hip.lang.cxx import expr_types

MEMORY_BASE = 60 << 20  # interpreter, rules and tables (a one-line file: ~40 MB)
# A 4 MB file: 335 MB now, 410 MB before (two trees at once in the fix loop); budget 362 MB.
MEMORY_PER_BYTE = 72

UNIT = """
__global__ void scale_{i}(float* out, const float* in, int n) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = 2.0f * in[idx];  // doubled
}}

void run_{i}(const float* host, float* result, int n) {{
    float* d_in; float* d_out;
    cudaError_t err = cudaMalloc(&d_in, n * sizeof(float));
    if (err != cudaSuccess) return;
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, host, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    scale_{i}<<<(n + 255) / 256, 256, 0, s>>>(d_out, d_in, n);
    cudaStreamSynchronize(s);
    cudaMemcpy(result, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaStreamDestroy(s);
    cudaFree(d_in);
    cudaFree(d_out);
}}
"""

# Runs the CLI as its child and prints that child's peak RSS (bytes) and exit code.
MEASURE = """
import json, resource, subprocess, sys
r = subprocess.run([sys.executable, "-m", "cuda2hip", *sys.argv[1:]], capture_output=True, text=True)
print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, r.returncode, r.stdout[-300:]]))
"""


def _generated(size: int) -> str:
    parts, total, i = ["#include <cuda_runtime.h>\n"], 0, 0
    while total < size:
        parts.append(UNIT.format(i=i))
        total += len(parts[-1])
        i += 1
    return "".join(parts)


@pytest.mark.slow
def test_fix_of_a_large_file_stays_within_the_memory_budget(tmp_path):
    text = _generated(4 << 20)
    f = tmp_path / "big.cu"
    f.write_text(text)
    r = subprocess.run([sys.executable, "-c", MEASURE, "fix", "--no-cache", "big.cu"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "CUDA2HIP_CACHE_DIR": str(tmp_path / "cache")})
    peak, code, out = json.loads(r.stdout)
    assert code == 0 and "Nothing remains" in out, (out, r.stderr[-500:])
    budget = MEMORY_BASE + MEMORY_PER_BYTE * len(text)
    assert peak <= budget, f"peak RSS {peak >> 20} MB for a {len(text) >> 20} MB file (budget {budget >> 20} MB)"
    assert "cudaMalloc" not in f.read_text()


def _scanned(node, name: str, data: bytes):
    """What expr_types._scope_declaration found before it had a table: the last declaration of
    `name` among the earlier siblings, in the innermost scope that has one."""
    cur = node
    while cur.parent is not None:
        parent, found = cur.parent, None
        if parent.type in expr_types._SCOPES:
            for sib in parent.named_children:
                if sib.start_byte >= cur.start_byte:
                    break
                if sib.type == "declaration" and expr_types._declarator_of(sib, name, data) is not None:
                    found = sib
            if found is not None:
                return found
        cur = parent
    return None


def test_scope_declarations_found_by_table_are_those_a_scan_finds():
    data = b"""int a, b; float c;
namespace ns { double a; void f() { a = 1; c = 2; } int c; void g() { c = 3; } }
extern "C" { int d; void h() { d = a; } }
int d = 4; struct S { int x; } s, *ps;
void k() { s.x = ps->x + d; }
int a;
void m(S q) { q.x = a + b; }
""" + _generated(20_000).encode()
    tree = parsing.parse("cuda", data)
    stack, checked, found = [tree.root_node], 0, 0
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "identifier":
            name = data[node.start_byte:node.end_byte].decode()
            want, got = _scanned(node, name, data), expr_types._scope_declaration(node, name, data)
            assert (got[1].id if got else None) == (want.id if want else None), (name, node.start_point)
            assert got is None or got[0] == want.child_by_field_name("type")
            checked += 1
            found += got is not None
    assert checked > 1000 and found >= 10
