"""Resolved settings of one run: configuration file merged with command-line options.

Plain data (picklable), so worker processes can rebuild the same engine.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct, field

from .rocm_releases import DEFAULT as DEFAULT_TARGET_ROCM

DEFAULT_FILE_TYPES: dict[str, tuple[str, ...]] = {
    # .hip: migrated sources (`fix --rename`) are still checked for CUDA leftovers; .hu: CUDA
    # headers as LightGBM names them
    "cuda": (".cu", ".cuh", ".hu", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl", ".hip"),
    "python": (".py",),
    "cmake": ("CMakeLists.txt", ".cmake"),
    "make": ("Makefile", "makefile", "GNUmakefile", ".mk"),
}


class Settings(Struct):
    root: Path = field(default_factory=Path.cwd)  # project root (config folder, else repository root)
    config_path: Path | None = None
    select: tuple[str, ...] | None = None  # None: the rules enabled by default
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False  # apply excludes to paths named on the command line too
    follow_includes: bool = False  # also run on the local headers the named files include
    rule_dirs: tuple[Path, ...] = ()
    include_builtin_rules: bool = True
    rule_options: dict[str, dict] = field(default_factory=dict)  # code or id -> options
    file_types: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_FILE_TYPES))
    unsafe_fixes: bool = False
    fail_on: str = "warning"
    show_suppressed: bool = False
    jobs: int | None = None
    use_cache: bool = True
    markdown_limit: int = 65536  # longest --format markdown report (characters; 0: no limit)
    verbose: bool = False  # say what the cache did (hits, misses, damaged entries)
    # migration target: always one of rocm_releases.AUDITED (the newest unless configured)
    target_rocm: str = DEFAULT_TARGET_ROCM
    experimental: bool = False
    library_profile: str = "hip"  # hip (hipBLAS, ...) or roc (rocBLAS, ...)
    kernel_launch: str = "keep"  # keep <<<...>>> or convert to hipLaunchKernelGGL ("hip")
    extra: dict = field(default_factory=dict)  # settings of frontends / rule families
    # Where `#include "..."` looks after the including file's folder and the root (absolute):
    # --include-dir / `include-dirs`, and the project's -I folders of compile_commands.json.
    include_dirs: tuple[str, ...] = ()
    compile_commands: str | None = None  # the compilation database named (else found: project/compile_commands.py)
    # compile_commands.json's -D macros of each file (resolved path -> ((name, value), ...);
    # value None: defined to something that is not a number)
    defines: dict[str, tuple[tuple[str, int | None], ...]] = field(default_factory=dict)

    def included_language(self, path: Path) -> str:
        """The language of a file a C/C++/CUDA file `#include`s: its file type's, else C/C++
        (the compiler reads it as part of the unit, whatever its name: `.inc`, `.tpp`, ...)."""
        lang = self.language_for(path)
        return "cuda" if lang is None else lang

    def language_for(self, path: Path) -> str | None:
        name = path.name
        suffix = path.suffix.lower()
        for lang, patterns in self.file_types.items():
            for pat in patterns:
                if pat.startswith("."):
                    if suffix == pat:
                        return lang
                elif name == pat:
                    return lang
        return None
