"""Generate a synthetic CUDA source tree for the benchmark.

The files look like real CUDA projects (kernels, templates, host code with runtime API calls,
error-check macros, `#if` branches, headers with device helpers, plain C++ files without CUDA),
so the parser, the rules and the fix loop do the work they do on real code. Generation is
deterministic for a given seed and size.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HEADER = """\
// {name}: generated benchmark source (cuda2hip bench/corpus.py)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "../common/check.cuh"
"""

CHECK_HEADER = """\
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \\
  do {                                                                          \\
    cudaError_t err__ = (call);                                                 \\
    if (err__ != cudaSuccess) {                                                 \\
      std::fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__,                   \\
                   cudaGetErrorString(err__));                                  \\
      std::exit(1);                                                             \\
    }                                                                           \\
  } while (0)

template <typename T>
__device__ __forceinline__ T clamp_value(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
"""

KERNELS = [
    """\
__global__ void {k}_scale(float* out, const float* in, float alpha, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {{
    out[i] = alpha * in[i];
  }}
}}
""",
    """\
template <typename T, int BLOCK>
__global__ void {k}_reduce(const T* in, T* out, int n) {{
  __shared__ T tile[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * BLOCK + tid;
  tile[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {{
    if (tid < s) {{
      tile[tid] += tile[tid + s];
    }}
    __syncthreads();
  }}
  if (tid == 0) {{
    atomicAdd(out, tile[0]);
  }}
}}
""",
    """\
__global__ void {k}_saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{
    y[i] = a * x[i] + y[i];
  }}
}}
""",
    """\
__global__ void {k}_stencil(const double* src, double* dst, int nx, int ny) {{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= nx - 1 || y >= ny - 1) {{
    return;
  }}
  int c = y * nx + x;
  dst[c] = 0.25 * (src[c - 1] + src[c + 1] + src[c - nx] + src[c + nx]);
}}
""",
    """\
struct {K}Params {{
  int rows;
  int cols;
  float scale;
}};

__device__ float {k}_weight(int r, int c, const {K}Params& p) {{
  return p.scale * static_cast<float>(r * p.cols + c);
}}

__global__ void {k}_matrix(float* m, {K}Params p) {{
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < p.rows && c < p.cols) {{
    m[r * p.cols + c] = clamp_value({k}_weight(r, c, p), -1.0f, 1.0f);
  }}
}}
""",
]

HOST = [
    """\
void {k}_run_scale(int n) {{
  float* d_in = nullptr;
  float* d_out = nullptr;
  std::vector<float> h(n, 1.0f);
  CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  {k}_scale<<<ceil_div(n, 256), 256>>>(d_out, d_in, 2.0f, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(h.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
}}
""",
    """\
float {k}_run_reduce(const std::vector<float>& values) {{
  const int n = static_cast<int>(values.size());
  float* d_in = nullptr;
  float* d_sum = nullptr;
  float result = 0.0f;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_sum, sizeof(float)));
  CUDA_CHECK(cudaMemsetAsync(d_sum, 0, sizeof(float), stream));
  CUDA_CHECK(cudaMemcpyAsync(d_in, values.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  {k}_reduce<float, 256><<<ceil_div(n, 256), 256, 0, stream>>>(d_in, d_sum, n);
  CUDA_CHECK(cudaMemcpyAsync(&result, d_sum, sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  cudaFree(d_in);
  cudaFree(d_sum);
  return result;
}}
""",
    """\
double {k}_time_saxpy(int n, int repeats) {{
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; ++i) {{
    x[i] = 1.0f;
    y[i] = 2.0f;
  }}
  cudaEventRecord(start);
  for (int r = 0; r < repeats; ++r) {{
    {k}_saxpy<<<128, 256>>>(n, 2.0f, x, y);
  }}
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(x);
  cudaFree(y);
  return ms / repeats;
}}
""",
    """\
int {k}_device_report() {{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {{
    std::printf("no CUDA device\\n");
    return 0;
  }}
  for (int d = 0; d < count; ++d) {{
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, d);
    std::printf("device %d: %s, %d SMs, warp %d\\n", d, prop.name, prop.multiProcessorCount,
                prop.warpSize);
  }}
#if defined(USE_PEER_ACCESS)
  cudaSetDevice(0);
  cudaDeviceEnablePeerAccess(1, 0);
#else
  cudaSetDevice(0);
#endif
  return count;
}}
""",
    """\
void {k}_run_stencil(int nx, int ny, int steps) {{
  size_t bytes = static_cast<size_t>(nx) * ny * sizeof(double);
  double *a = nullptr, *b = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&a), bytes);
  cudaMalloc(reinterpret_cast<void**>(&b), bytes);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  dim3 block(16, 16);
  dim3 grid(ceil_div(nx, block.x), ceil_div(ny, block.y));
  for (int s = 0; s < steps; ++s) {{
    {k}_stencil<<<grid, block>>>(a, b, nx, ny);
    std::swap(a, b);
  }}
  cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {{
    std::fprintf(stderr, "stencil failed: %s\\n", cudaGetErrorString(status));
  }}
  cudaFree(a);
  cudaFree(b);
}}
""",
]

PLAIN_CPP = """\
// {name}: host-only C++ (no CUDA)
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace {k} {{

struct Stats {{
  double mean = 0.0;
  double min = 0.0;
  double max = 0.0;
}};

Stats summarize(const std::vector<double>& v) {{
  Stats s;
  if (v.empty()) {{
    return s;
  }}
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  auto mm = std::minmax_element(v.begin(), v.end());
  s.min = *mm.first;
  s.max = *mm.second;
  return s;
}}

std::string describe(const Stats& s) {{
  return "mean=" + std::to_string(s.mean) + " min=" + std::to_string(s.min) +
         " max=" + std::to_string(s.max);
}}

}}  // namespace {k}
"""

DOC = "# {name}\n\nGenerated benchmark project. Build with `make`.\n"


def _cuda_file(rng: random.Random, name: str, k: str, target_lines: int) -> str:
    parts = [HEADER.format(name=name)]
    lines = parts[0].count("\n")
    n = 0
    while lines < target_lines:
        kk = f"{k}_{n}"
        pick = rng.randrange(len(KERNELS))
        body = KERNELS[pick].format(k=kk, K=kk.title().replace("_", ""))
        host = HOST[pick].format(k=kk)
        comment = f"\n// Section {n}: kernels and host code for {kk} (cudaMalloc-based)\n"
        chunk = comment + body + "\n" + host
        parts.append(chunk)
        lines += chunk.count("\n")
        n += 1
    return "".join(parts)


def generate(out: Path, lines: int, seed: int = 1, file_lines: int = 300) -> dict:
    """Write a tree of about `lines` source lines under `out`; returns counts."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    common = out / "common"
    common.mkdir(exist_ok=True)
    (common / "check.cuh").write_text(CHECK_HEADER)
    total = CHECK_HEADER.count("\n")
    files = 1
    i = 0
    while total < lines:
        group = out / f"module{i // 20:03d}"
        group.mkdir(exist_ok=True)
        k = f"m{i}"
        if i % 7 == 6:
            text = PLAIN_CPP.format(name=f"util{i}.cpp", k=k)
            path = group / f"util{i}.cpp"
        else:
            size = rng.randint(file_lines // 2, file_lines * 3 // 2)
            text = _cuda_file(rng, f"kernels{i}.cu", k, size)
            path = group / f"kernels{i}.cu"
        path.write_text(text)
        total += text.count("\n")
        files += 1
        if i % 20 == 0:
            (group / "README.md").write_text(DOC.format(name=group.name))
        i += 1
    return {"files": files, "lines": total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lines", type=int, default=250_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(generate(args.out, args.lines, args.seed))


if __name__ == "__main__":
    main()
