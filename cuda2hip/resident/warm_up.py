"""What the server runs before it serves: every check then finds the modules imported, the rules
validated and their name tables, queries and data loaded.

Everything runs in a folder of the server's own, with a cache folder of its own: the user's
files, configuration and caches are read by the forks that run the checks, as in any run.
"""

from __future__ import annotations

import contextlib
import io
import os

_CASE_FILES = {"cuda": "case.cu", "python": "case.py", "cmake": "CMakeLists.txt", "make": "Makefile"}
CACHE_ENV = "CUDA2HIP_CACHE_DIR"


PROJECT = {
    "kernel.cuh": """#pragma once
#include <cuda_runtime.h>
#define WARPS 4
struct Pair { float a, b; };
__device__ inline float twice(float x) { return 2 * x; }
""",
    "kernel.cu": """#include "kernel.cuh"
__global__ void scale(Pair* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i].a = twice(p[i].b);
}
void run(Pair* p, int n) {
  scale<<<(n + 255) / 256, 256>>>(p, n);
  cudaDeviceSynchronize();
}
""",
}


class Workspace:
    """The server's folder: the built-in rules' invalid test cases (one folder each) and one
    CUDA file made of all the CUDA cases (`primer`), and the server's cache folder."""

    def __init__(self, folder: str):
        from ..engine.engine import load_all_rules
        from ..settings import Settings

        self.folder = folder
        self.cases = os.path.join(folder, "cases")
        self.cache = os.path.join(folder, "cache")
        self.primer = os.path.join(folder, "primer", "primer.cu")
        os.makedirs(os.path.dirname(self.primer))
        cuda = []
        for n, (rule, case) in enumerate((r, c) for r in load_all_rules(Settings()) for c in r.tests.invalid):
            code = case if isinstance(case, str) else case.code
            name = _CASE_FILES.get(rule.language, "case.cu")
            if not isinstance(case, str) and case.filename:
                name = os.path.basename(case.filename)
            target = os.path.join(self.cases, str(n))
            os.makedirs(target)
            with open(os.path.join(target, name), "w", encoding="utf-8") as f:
                f.write(code)
            if name.endswith(".cu"):
                cuda.append(code)
        with open(self.primer, "w", encoding="utf-8") as f:
            f.write("\n".join(cuda))
        # A file with a local header: what a check in a repository reads besides the file (the
        # header's definitions, what it includes, whether fix would change it).
        self.project = os.path.join(folder, "project")
        os.makedirs(self.project)
        for name, text in PROJECT.items():
            with open(os.path.join(self.project, name), "w", encoding="utf-8") as f:
                f.write(text)

    def check(self, *args: str) -> None:
        self.run("check", *args)

    def run(self, command: str, *args: str, cache: bool = False) -> None:
        """`cuda2hip COMMAND --isolated --no-cache -j 1 ARGS` in this process (without
        --no-cache with `cache`), output discarded, with the server's cache folder."""
        from ..cli.commands import main

        saved = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = self.cache
        # In the folder, as a hook runs in its repository: the project's headers are then under
        # the run's root, wherever `server start` ran (outside it they are no project's, and
        # what a check derives from them, e.g. HIP121's header facts, would stay unprimed).
        try:
            cwd = os.getcwd()
        except OSError:  # started in a folder removed since
            cwd = None
        os.chdir(self.folder)
        try:
            sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # with a .buffer, as fix writes bytes
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                try:
                    main([command, "--isolated", *(() if cache else ("--no-cache",)), "-j", "1", *args])
                except SystemExit:
                    pass
        finally:
            if cwd is not None:
                os.chdir(cwd)
            if saved is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = saved
            import tempfile

            tempfile.tempdir = None  # chosen from this environment: a fork chooses from its own

    def warm_up(self) -> None:
        """The server's own warm-up: all the cases, in each core report format."""
        for fmt in ("text", "concise", "json", "sarif"):
            self.check("--format", fmt, self.cases)
        self.run("fix", "--diff", self.cases)
        # pre-commit's hook runs with the result cache: a miss, then a hit
        for _ in range(2):
            self.run("check", "--format", "concise", os.path.join(self.project, "kernel.cu"), cache=True)

    def prime(self) -> None:
        """A spare fork's: one file, as a pre-commit call checks, in the formats a terminal and
        pre-commit use. Running it copies into the fork the memory pages a check writes (Python
        writes the reference count of every object it uses), which the check it then runs would
        otherwise copy one page fault at a time: ~12 ms of a ~25 ms check."""
        for fmt in ("text", "concise"):
            self.check("--format", fmt, self.primer)
        self.run("check", "--format", "concise", os.path.join(self.project, "kernel.cu"), cache=True)
