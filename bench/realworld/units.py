"""A code base's input tree, its translation units, and the kernels embedded in its Python files."""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pathspec

from .config import Codebase, HumanPort

# Kernel-source calls whose first argument (or `code=` / `source=`) is a whole translation unit.
KERNEL_CALLS = {"RawKernel": "code", "RawModule": "code", "SourceModule": "source"}


def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)  # ("gitwildmatch" is deprecated in pathspec 1.x)


def select_files(root: Path, files: tuple[str, ...], exclude: tuple[str, ...] = ()) -> list[str]:
    """Paths (relative, POSIX) of the regular files under root matching `files` and not `exclude`."""
    wanted, unwanted = _spec(files), _spec(exclude)
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            if wanted.match_file(rel) and not unwanted.match_file(rel):
                out.append(rel)
    return out


def stage(codebase: Codebase, source_root: Path, dest: Path) -> list[str]:
    """Copy the code base's files into dest (replacing what was there); return their paths."""
    root = source_root / codebase.root
    if not root.is_dir():
        raise FileNotFoundError(f"{codebase.name}: {root} is not in the extracted source")
    return _copy(codebase, root, select_files(root, codebase.files, codebase.exclude), dest)


def _copy(codebase: Codebase, root: Path, files: list[str], dest: Path) -> list[str]:
    shutil.rmtree(dest, ignore_errors=True)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    for rel, text in codebase.generated.items():
        target = dest / rel
        if not target.resolve().is_relative_to(dest.resolve()):
            raise ValueError(f"{codebase.name}: generated file {rel!r} is outside the tree")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        files.append(rel)
    return files


def stage_port(codebase: Codebase, source_root: Path, dest: Path) -> list[str]:
    """Copy the files of the code base's own HIP port into dest: its `files` (default: the code
    base's) less its `exclude` (default: nothing, so a vendor header the migration input leaves
    out is there)."""
    port = codebase.human_port
    assert port is not None
    root = source_root / codebase.root
    return _copy(codebase, root, select_files(root, port.files or codebase.files, port.exclude), dest)


def port_path(port: HumanPort, unit: str) -> str:
    """The path in the port's tree of the unit at `unit` (the first matching mapping; the same
    path when none matches)."""
    for pattern, replacement in port.units:
        if re.fullmatch(pattern, unit):
            return re.sub(pattern, replacement, unit)
    return unit


def translation_units(codebase: Codebase, tree: Path) -> list[str]:
    if not codebase.units:
        return []
    spec = _spec(codebase.units)
    matching = re.compile(codebase.units_matching) if codebase.units_matching else None
    units = []
    for rel in select_files(tree, codebase.units):
        if not spec.match_file(rel):
            continue
        # .cpp units must be CUDA host code; .cu/.cuh files always are.
        if matching and not rel.endswith((".cu", ".cuh")):
            if not matching.search((tree / rel).read_text(errors="replace")):
                continue
        units.append(rel)
    return units


@dataclass(frozen=True)
class Kernel:
    """A kernel source passed as a literal to RawKernel / RawModule / SourceModule."""

    path: str  # the .py file, relative to the tree
    index: int  # its position among the file's kernels (the same in the migrated file)
    call: str
    code: str
    line: int  # line of the .py file where the kernel's first line is
    exact_lines: bool  # kernel line n is .py line `line + n - 1` (no escaped newlines)
    extern_c: bool  # PyCUDA wraps the source in extern "C" { ... }

    @property
    def unit_name(self) -> str:
        return f"{self.path}#{self.index}"


def _module_strings(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level names bound exactly once to a string literal."""
    bound: dict[str, list[ast.AST]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            bound.setdefault(node.target.id, []).append(node.value)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str)}


def _call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def embedded_kernels(path: str, text: str) -> list[Kernel]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    strings = _module_strings(tree)
    kernels = []
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for node in calls:
        name = _call_name(node.func)
        if name not in KERNEL_CALLS:
            continue
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == KERNEL_CALLS[name]), None)
        if isinstance(arg, ast.Name):
            arg = strings.get(arg.id)
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            continue  # built at run time: not a translation unit we can compile as it is
        no_extern_c = any(k.arg == "no_extern_c" and isinstance(k.value, ast.Constant) and k.value.value
                          for k in node.keywords)
        exact = arg.value.count("\n") == (arg.end_lineno or arg.lineno) - arg.lineno
        kernels.append(Kernel(path=path, index=len(kernels), call=name, code=arg.value, line=arg.lineno,
                              exact_lines=exact, extern_c=name == "SourceModule" and not no_extern_c))
    return kernels


def kernel_unit_text(kernel: Kernel, prelude: str = "") -> str:
    """The kernel as a file of its own. `#line` makes compilers report the .py file's lines."""
    head = f'#line {kernel.line} "{kernel.path}"\n' if kernel.exact_lines else ""
    body = head + kernel.code
    if kernel.extern_c:
        body = 'extern "C" {\n' + body + '\n}\n'
    return prelude + body + "\n"
