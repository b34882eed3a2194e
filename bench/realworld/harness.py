"""One code base through the yardstick: valid CUDA? -> migrate -> builds with hipcc? -> predicted?

    stage the input tree            .cache/real-world/work/SLUG/in
    nvcc proves which units are CUDA as they are (cached: the input is pinned)   validate()
    then at each ROCm release R (a HIP toolchain of tests/harness/hip_toolchains.py):  build()
      cuda2hip fix --output-dir OUT --target-rocm R --no-cache IN
      cuda2hip check --format json --target-rocm R on OUT (the findings a user reads)
      cuda2hip fix --diff on OUT (a second fix must change nothing)
      R's hipcc compiles every nvcc-valid unit of OUT; each failure is classified by its first error:
        predicted  a warning/error finding at the place the error is (see diagnostics.py)
        silent     none: a defect of cuda2hip
      where the code base ships its own HIP port (corpus.toml `human_port`), R's hipcc compiles
      that port's unit of each nvcc-valid unit too: the units whose port compiles are the fair
      set, on which cuda2hip's output is measured against the port (the ceiling)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import compilers, units
from .config import Codebase
from .diagnostics import candidate_locations, first_error

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Paths:
    cache: Path  # .cache/real-world
    cuda_library_include: Path | None


@dataclass
class Failure:
    unit: str
    first_error: str
    location: str  # where it was placed in the tree ("" if nowhere)
    predicted_by: str = ""  # "HIP102 at file:line" or "" (silent)
    output: str = ""

    @property
    def silent(self) -> bool:
        return not self.predicted_by


@dataclass
class CodebaseResult:
    name: str
    release: str = ""  # the ROCm release migrated for (--target-rocm) and compiled with
    units: int = 0
    nvcc_valid: int = 0
    not_cuda: list[str] = field(default_factory=list)  # units nvcc rejects as they are
    compiled: int = 0
    failures: list[Failure] = field(default_factory=list)
    fix_seconds: float = 0.0
    fix_exit: int = 0
    fix_errors: list[str] = field(default_factory=list)  # files cuda2hip refused (exit 2)
    refix_changed: list[str] = field(default_factory=list)  # files a second fix changes
    findings: int = 0
    findings_by_code: dict[str, int] = field(default_factory=dict)
    from_cache: int = 0  # hipcc results the compile cache had
    human_port: int = 0  # nvcc-valid units that have a unit in the code base's own HIP port
    human_compiled: list[str] = field(default_factory=list)  # those whose port compiles: the fair set
    human_errors: dict[str, str] = field(default_factory=dict)  # the port's first error, by unit

    @property
    def predicted(self) -> int:
        return sum(not f.silent for f in self.failures)

    @property
    def fair_compiled(self) -> int:
        """The units of the fair set that cuda2hip's output compiles too."""
        return fair_compiled(self.human_compiled, self.failures)

    @property
    def silent(self) -> int:
        return sum(f.silent for f in self.failures)


def fair_compiled(human_compiled: list[str], failures: list[Failure]) -> int:
    """Of the units whose human port compiles (each an nvcc-valid unit), those whose migrated
    version has no failure."""
    failed = {f.unit for f in failures}
    return sum(unit not in failed for unit in human_compiled)


def _tool(tool_src: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tool_src))
    env.pop("CUDA2HIP_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "cuda2hip", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, errors="replace")


def _rel_includes(codebase: Codebase) -> list[str]:
    return [os.path.normpath(d) for d in codebase.include]


def _stage(codebase: Codebase, source_root: Path, work: Path, name: str, stage) -> Path:
    """work/NAME, staged by `stage` unless the same code base and source staged it last."""
    tree = work / name
    stamp = hashlib.sha256(json.dumps([asdict(codebase), str(source_root)], sort_keys=True).encode()).hexdigest()
    marker = work / f"{name}.stamp"
    if not (marker.is_file() and marker.read_text() == stamp and tree.is_dir()):
        stage(codebase, source_root, tree)
        marker.write_text(stamp)
    return tree


@dataclass
class Unit:
    name: str  # tree path, or PY#INDEX for an embedded kernel
    path: str  # what the compiler is given, relative to the tree
    kernel: units.Kernel | None = None


def _kernel_units(codebase: Codebase, tree: Path, folder: Path, fresh: bool = True) -> list[Unit]:
    """The embedded kernels of the tree as files in `folder`. The input's folder is shared by
    concurrent runs (its files depend only on the pinned input): written atomically, not cleared."""
    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    out = []
    for rel in units.select_files(tree, codebase.embedded):
        for kernel in units.embedded_kernels(rel, (tree / rel).read_text(errors="replace")):
            target = folder / f"{kernel.path}.{kernel.index}.cu"
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(units.kernel_unit_text(kernel))
            tmp.replace(target)
            out.append(Unit(kernel.unit_name, os.path.relpath(target, tree), kernel))
    return out


def _compile_all(jobs: int, tasks: list) -> list:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda task: task(), tasks))


class Compiler:
    """nvcc, or (given a toolchain of tests/harness/hip_toolchains.py) that release's hipcc."""

    def __init__(self, codebase: Codebase, paths: Paths, toolchain=None, port: bool = False):
        self.kind = "hipcc" if toolchain else "nvcc"
        self.codebase = codebase
        self.toolchain = toolchain
        # The code base's own HIP port: its defines, pre-includes and flags replace the code base's.
        self.port = codebase.human_port if port else None
        self.cache = compilers.CompileCache(paths.cache / "compile-cache" / self.kind)
        external = [paths.cuda_library_include] if toolchain is None else map(Path, toolchain.library_includes)
        # Resolved, so that checkouts sharing one .cache (a symlink) share compile results too.
        self.external = [str(d.resolve()) for d in external if d and d.is_dir()]

    def command(self, unit: Unit) -> list[str]:
        includes = _rel_includes(self.codebase) + self.external
        flags = self.port or self.codebase
        defines = list(flags.defines)
        pre = [arg for header in flags.preinclude for arg in ("-include", header)]
        if self.kind == "nvcc":
            return compilers.nvcc_command(includes, defines, [*self.codebase.nvcc, *pre], unit.path)
        extra = [*flags.hipcc, *pre]
        if unit.kernel is not None:
            # Runtime-compiled kernels (hiprtc, like NVRTC) get the runtime's declarations
            # without an #include (ahead of a port's own pre-included headers).
            runtime = ["-include", "hip/hip_runtime.h"]
            extra = [*flags.hipcc, *runtime, *pre] if self.port else extra + runtime
        return compilers.hipcc_command(self.toolchain.command, includes, defines, extra, unit.path)

    def compile(self, tree: Path, unit: Unit) -> compilers.CompileResult:
        command = self.command(unit)
        scanner = compilers.DependencyScanner(tree, [tree / d for d in _rel_includes(self.codebase)])
        identity = self.toolchain.identity if self.toolchain else ""
        key = self.cache.key(command, scanner.closure(tree / unit.path), tree, identity)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        result = compilers.run_compiler(command, tree, self.toolchain.env if self.toolchain else None)
        if "timed out" not in result.output:
            self.cache.put(key, result)
        return result


class FindingIndex:
    """The warning and error findings of the migrated tree, by file and line."""

    def __init__(self, findings: list[dict]):
        self.at: dict[tuple[str, int], list[dict]] = {}
        self.by_file: dict[str, list[dict]] = {}
        self.governing: dict[str, list[tuple[int, int, dict]]] = {}
        for f in findings:
            if f.get("suppressed") or f["severity"] not in ("warning", "error"):
                continue
            path = os.path.normpath(f["path"])
            self.at.setdefault((path, f["line"]), []).append(f)
            self.by_file.setdefault(path, []).append(f)
            governs = (f.get("data") or {}).get("governs_lines")
            if governs:  # a finding on an #if whose outcome migration changes (HIP210/HIP211)
                self.governing.setdefault(path, []).append((governs[0], governs[1], f))

    def predict(self, error, in_tree) -> tuple[str, str]:
        """(where the error was placed, which finding predicts it or "")."""
        locations = candidate_locations(error, in_tree)
        for loc in locations:
            hits = self.at.get((os.path.normpath(loc.path), loc.line))
            if hits:
                return f"{loc.path}:{loc.line}", f"{hits[0]['code']} at {loc.path}:{loc.line}"
        where = f"{locations[0].path}:{locations[0].line}" if locations else ""
        # The error sits in code whose compilation a reported #if decides (its other branch).
        for loc in locations:
            for first, last, f in self.governing.get(os.path.normpath(loc.path), []):
                if first <= loc.line <= last:
                    return where, f"{f['code']} at {loc.path}:{f['line']} (decides line {loc.line})"
        # The construct the error names, reported elsewhere in the same file.
        names = {n for n in error.names() if len(n) > 2}
        for loc in locations[:1]:
            for f in self.by_file.get(os.path.normpath(loc.path), []):
                if names & set(WORD.findall(f["message"])):
                    return where, f"{f['code']} at {loc.path}:{f['line']} (names it)"
        return where, ""


@dataclass
class Validated:
    """What nvcc decided about a code base's input (the same for every release)."""
    codebase: Codebase
    work: Path
    tree_in: Path
    units: int
    valid: list[Unit]
    not_cuda: list[str]
    port_tree: Path | None = None  # the code base's own HIP port, staged from the same source


def validate(codebase: Codebase, source_root: Path, paths: Paths, jobs: int, reduced: bool = False,
             log=print) -> Validated:
    work = paths.cache / "work" / codebase.slug
    work.mkdir(parents=True, exist_ok=True)
    if not (work / ".git").exists():
        # A repository of its own, as a user's checkout is: the .gitignore of the project that
        # holds .cache/ (which ignores .cache/) is not the code base's.
        subprocess.run(["git", "init", "-q", str(work)], check=True)
    tree_in = _stage(codebase, source_root, work, "in", units.stage)
    port_tree = _stage(codebase, source_root, work, "port", units.stage_port) if codebase.human_port else None
    wanted = set(codebase.reduced) if reduced else None
    unit_list = [Unit(u, u) for u in units.translation_units(codebase, tree_in)]
    unit_list += _kernel_units(codebase, tree_in, work / "embedded-in", fresh=False)
    if wanted is not None:
        unit_list = [u for u in unit_list if u.name in wanted]

    nvcc = Compiler(codebase, paths)
    log(f"[{codebase.name}] nvcc: {len(unit_list)} units")
    valid_results = _compile_all(jobs, [lambda u=u: nvcc.compile(tree_in, u) for u in unit_list])
    valid, not_cuda = [], []
    for unit, res in zip(unit_list, valid_results):
        (valid if res.ok else not_cuda).append(unit if res.ok else unit.name)
    return Validated(codebase, work, tree_in, len(unit_list), valid, not_cuda, port_tree)


def run_codebase(codebase: Codebase, source_root: Path, paths: Paths, tool_src: Path, label: str,
                 jobs: int, toolchain, reduced: bool = False, log=print) -> CodebaseResult:
    """The whole yardstick for one code base at one release."""
    return build(validate(codebase, source_root, paths, jobs, reduced, log), paths, toolchain, tool_src, label,
                 jobs, log)


def build(validated: Validated, paths: Paths, toolchain, tool_src: Path, label: str, jobs: int,
          log=print) -> CodebaseResult:
    """Migrate the code base for the toolchain's release, check it, and compile its nvcc-valid units
    with that release's hipcc."""
    codebase, work, tree_in, release = validated.codebase, validated.work, validated.tree_in, toolchain.release
    result = CodebaseResult(codebase.name, release)
    result.units = validated.units
    result.not_cuda = list(validated.not_cuda)
    result.nvcc_valid = len(validated.valid)
    out_root = work / "out" / label / release
    shutil.rmtree(out_root, ignore_errors=True)
    out_root.mkdir(parents=True)

    tree_out = out_root / "tree"
    log(f"[{codebase.name}] {release}: cuda2hip fix --output-dir --target-rocm {release}")
    start = time.monotonic()
    fixed = _tool(tool_src, "fix", "--output-dir", str(tree_out), "--target-rocm", release, "--no-cache",
                  str(tree_in), cwd=work)
    result.fix_seconds = time.monotonic() - start
    result.fix_exit = fixed.returncode
    if fixed.returncode not in (0, 1) or not tree_out.is_dir():
        result.fix_errors = fixed.stderr.strip().splitlines()[-20:]
        if not tree_out.is_dir():
            raise RuntimeError(f"{codebase.name}: cuda2hip fix failed:\n{fixed.stderr[-4000:]}")
    else:
        result.fix_errors = [line for line in fixed.stderr.splitlines() if ": error:" in line][:20]

    checked = _tool(tool_src, "check", "--format", "json", "--target-rocm", release, "--no-cache", ".",
                    cwd=tree_out)
    findings = json.loads(checked.stdout)["findings"] if checked.stdout.strip() else []
    result.findings = len(findings)
    for f in findings:
        result.findings_by_code[f["code"]] = result.findings_by_code.get(f["code"], 0) + 1
    index = FindingIndex(findings)

    refix = _tool(tool_src, "fix", "--diff", "--target-rocm", release, "--no-cache", ".", cwd=tree_out)
    result.refix_changed = sorted({line[4:].split("\t")[0].strip() for line in refix.stdout.splitlines()
                                   if line.startswith("+++ ")})

    # The migrated units: same tree paths; embedded kernels re-extracted from the migrated files.
    out_units = {u.name: u for u in _kernel_units(codebase, tree_out, out_root / "embedded")}
    todo: list[Unit] = []
    for unit in validated.valid:
        if unit.kernel is None:
            todo.append(Unit(unit.name, unit.path))
        elif unit.name in out_units:
            todo.append(out_units[unit.name])
        else:
            result.failures.append(Failure(unit.name, "the migrated file no longer has this kernel literal", ""))
    hipcc = Compiler(codebase, paths, toolchain)
    log(f"[{codebase.name}] {release}: hipcc ({toolchain.describe()}): {len(todo)} units")
    compiled = _compile_all(jobs, [lambda u=u: hipcc.compile(tree_out, u) for u in todo])
    result.from_cache = sum(res.cached for res in compiled)

    def in_tree(path: str) -> bool:
        return bool(path) and not os.path.isabs(path) and (tree_out / path).is_file() \
            and not os.path.normpath(path).startswith("..")

    for unit, res in zip(todo, compiled):
        if res.ok:
            result.compiled += 1
            continue
        error = first_error(res.output)
        if error is None:
            result.failures.append(Failure(unit.name, "failed without an error message", "", output=res.output))
            continue
        where, predicted_by = index.predict(error, in_tree)
        result.failures.append(Failure(unit.name, error.text, where, predicted_by, output=res.output[:4000]))
    if validated.port_tree is not None:
        _build_port(validated, paths, toolchain, jobs, result, log)
    return result


def port_units(validated: Validated) -> list[Unit]:
    """The port's unit of each nvcc-valid unit that has one. An embedded kernel is its own port
    (the project compiles the same string with hiprtc); its path leads out of the tree into the
    work folder, which the port's tree shares with the input's."""
    port, out = validated.codebase.human_port, []
    for unit in validated.valid:
        if unit.kernel is not None:
            out.append(unit)
            continue
        path = units.port_path(port, unit.path)
        if (validated.port_tree / path).is_file():
            out.append(Unit(unit.name, path))
    return out


def _build_port(validated: Validated, paths: Paths, toolchain, jobs: int, result: CodebaseResult, log) -> None:
    todo = port_units(validated)
    compiler = Compiler(validated.codebase, paths, toolchain, port=True)
    log(f"[{validated.codebase.name}] {toolchain.release}: the project's own HIP port: {len(todo)} units")
    compiled = _compile_all(jobs, [lambda u=u: compiler.compile(validated.port_tree, u) for u in todo])
    result.human_port = len(todo)
    for unit, res in zip(todo, compiled):
        if res.ok:
            result.human_compiled.append(unit.name)
        else:
            error = first_error(res.output)
            result.human_errors[unit.name] = error.text if error else "failed without an error message"
