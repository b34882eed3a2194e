"""Fix builders of the CMake rules (rules/build): what needs a look at the whole command or the
whole file. Each receives a `buildsys.kinds.CommandMatch`."""

from __future__ import annotations

from ...api.arch import offload_archs
from ...api.build_tables import library_table_file, resolve
from ...engine.builders import BuiltFix, fix_builder
from ...findings import Edit
from ...lang.build.cmake_syntax import Argument, Command, file_commands, line_indent
from ...lang.build.tokens import IMPORTED_TARGET

SET_KEYWORDS = frozenset({"CACHE", "PARENT_SCOPE"})
SOURCE_COMMANDS = frozenset({"add_executable", "add_library", "target_sources", "set", "list"})


def _arg_source(ctx, arg: Argument) -> str:
    return ctx.data[arg.node.start_byte:arg.node.end_byte].decode("utf-8", "replace")


def _arch_value(archs: list[str]) -> str:
    return archs[0] if len(archs) == 1 else '"' + ";".join(archs) + '"'


@fix_builder("cmake-architectures")
def cmake_architectures(match, ctx, rule):
    """`CMAKE_CUDA_ARCHITECTURES` / `CUDA_ARCHITECTURES` -> the HIP names, with the values the
    user gave as --offload-arch. Without them there is nothing honest to write: no fix."""
    archs = offload_archs(ctx.settings)
    if not archs:
        return None
    cmd: Command = match.command
    arg: Argument = match.argument
    old = match.regex.group("fix")
    new = old.replace("CUDA_", "HIP_")
    s = arg.start + match.regex.start("fix")
    edits = [Edit(s, s + len(old), new)]
    args = cmd.args
    values: list[Argument] = []
    if cmd.name == "set" and arg.index == 0 and arg.text == old:
        for a in args[1:]:
            if a.text in SET_KEYWORDS:
                break
            values.append(a)
    elif cmd.name == "set_target_properties" and arg.text == old and arg.index + 1 < len(args) \
            and any(a.text == "PROPERTIES" for a in args[:arg.index]):
        values.append(args[arg.index + 1])
    elif cmd.name == "set_property" and arg.text == old and arg.index and args[arg.index - 1].text == "PROPERTY":
        values.extend(args[arg.index + 1:])
    elif cmd.name in ("list", "string") and arg.text == old:
        return None  # edits a CUDA list in place: the AMD values cannot be derived from it
    if values:
        edits.append(Edit(values[0].node.start_byte, values[-1].node.end_byte, _arch_value(archs)))
    shown = ", ".join(archs)
    return BuiltFix(edits, message=f"`{old}` -> `{new}` ({shown}, from --offload-arch)",
                    description=f"Use `{new}` with {shown}")


def _library_packages(ctx, rule) -> list[str]:
    """find_package() names the HIP counterparts of the libraries this file links need."""
    table = rule.params.get("table")
    if not table:
        return []
    entries = library_table_file(resolve(rule.rule.source_path, table))
    profile = ctx.settings.library_profile
    by_name = {}
    for e in entries:
        other = e.counterpart(profile)
        if other is None or not other.package or not other.target:
            continue
        if e.target:
            by_name[e.target] = other.package
        by_name[other.target] = other.package
    out: list[str] = []
    for cmd in file_commands(ctx):
        for a in cmd.args:
            for m in IMPORTED_TARGET.finditer(a.text):
                pkg = by_name.get(m.group())
                if pkg and pkg not in out:
                    out.append(pkg)
    return out


@fix_builder("cmake-find-hip")
def cmake_find_hip(match, ctx, rule):
    """find_package(CUDAToolkit ...) -> find_package(hip ...) plus the packages of the HIP
    libraries the file links (hip::hiprand needs find_package(hiprand), ...)."""
    cmd: Command = match.command
    found = {c.args[0].text for c in file_commands(ctx) if c.name == "find_package" and c.args}
    flags = [a.text for a in cmd.args[1:] if a.text in ("REQUIRED", "QUIET")]
    suffix = "".join(f" {f}" for f in flags)
    packages = ["hip", *(p for p in _library_packages(ctx, rule) if p != "hip" and p not in found)]
    indent = line_indent(ctx.data, cmd.start)
    text = f"\n{indent}".join(f"find_package({p}{suffix})" for p in packages)
    return BuiltFix([Edit(cmd.start, cmd.end, text)], description=f"Replace with `{text}`")


def _covered_sources(ctx) -> set[str]:
    """Sources whose LANGUAGE property this file sets (to HIP, or to CUDA: another rule turns
    that into HIP)."""
    key = "cmake-language-sources"
    cache = ctx.file_cache
    if key not in cache:
        covered = set()
        for c in file_commands(ctx):
            texts = c.values()
            if c.name == "set_source_files_properties" and "PROPERTIES" in texts:
                k = texts.index("PROPERTIES")
                props = texts[k + 1:]
                if any(props[i] == "LANGUAGE" and props[i + 1] in ("HIP", "CUDA")
                       for i in range(0, len(props) - 1)):
                    covered.update(texts[:k])
            elif c.name == "set_property" and texts[:1] == ["SOURCE"] and "PROPERTY" in texts:
                k = texts.index("PROPERTY")
                if texts[k + 1:k + 3] in (["LANGUAGE", "HIP"], ["LANGUAGE", "CUDA"]):
                    covered.update(t for t in texts[1:k] if t not in ("DIRECTORY", "TARGET_DIRECTORY"))
        cache[key] = covered
    return cache[key]


GLOB_KEYWORDS = frozenset({"LIST_DIRECTORIES", "true", "false", "RELATIVE", "CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"})


def _glob_of_cu(cmd: Command) -> tuple[str, bool] | None:
    """(`${VAR}`, whether every pattern names .cu files) of file(GLOB VAR ...) with .cu patterns."""
    texts = cmd.values()
    if cmd.name != "file" or len(texts) < 3 or texts[0] not in ("GLOB", "GLOB_RECURSE"):
        return None
    patterns, skip = [], False
    for t in texts[2:]:
        if skip:
            skip = False
        elif t == "RELATIVE":
            skip = True
        elif t not in GLOB_KEYWORDS:
            patterns.append(t)
    cu = [p for p in patterns if p.endswith(".cu")]
    return (f"${{{texts[1]}}}", len(cu) == len(patterns)) if cu else None


def cu_sources(cmd: Command) -> list[Argument]:
    first = 2 if cmd.name == "list" else 1
    if cmd.name == "list" and cmd.values()[:1] not in (["APPEND"], ["PREPEND"], ["INSERT"]):
        return []
    return [a for a in cmd.args[first:] if a.text.endswith(".cu") and "$<" not in a.text and not a.bracket]


@fix_builder("cmake-cu-language")
def cmake_cu_language(match, ctx, rule):
    """.cu sources: CMake gives them the CUDA language by extension; in a HIP build they need
    the LANGUAGE HIP source property (set_source_files_properties) or they are not compiled."""
    cmd: Command = match.command
    covered = _covered_sources(ctx)
    if cmd.name == "file":
        found = _glob_of_cu(cmd)
        last_cu = max(a.index for a in cmd.args if a.text.endswith(".cu"))
        if found is None or found[0] in covered or match.argument.index != last_cu:
            return False
        if not found[1]:
            return None  # .cu and other sources in one glob: only the user can split them
        names, shown = found[0], found[0]
    else:
        missing = [a for a in cu_sources(cmd) if a.text not in covered]
        if not missing or match.argument.index != missing[0].index:
            return False  # one finding per command, at its first uncovered source
        names = " ".join(_arg_source(ctx, a) for a in missing)
        shown = ", ".join(a.text for a in missing)
    indent = line_indent(ctx.data, cmd.start)
    text = f"\n{indent}set_source_files_properties({names} PROPERTIES LANGUAGE HIP)"
    return BuiltFix([Edit(cmd.end, cmd.end, text)],
                    message=rule.message(COMMAND=cmd.name, SOURCES=shown),
                    description="Set LANGUAGE HIP on the .cu sources")


LEGACY_TARGET_KEYWORDS = frozenset({"WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL", "STATIC", "SHARED", "MODULE"})


@fix_builder("cmake-legacy-target")
def cmake_legacy_target(match, ctx, rule):
    """cuda_add_executable / cuda_add_library (FindCUDA) -> the modern form, display only: the
    user replaces find_package(CUDA) as well, which this rule cannot see whole."""
    cmd: Command = match.command
    if cmd.name not in ("cuda_add_executable", "cuda_add_library") or not cmd.args:
        return None
    name = _arg_source(ctx, cmd.args[0])
    rest = list(cmd.args[1:])
    opts: list[Argument] = []
    for i, a in enumerate(rest):
        if a.text == "OPTIONS":
            opts = rest[i + 1:]
            rest = rest[:i]
            break
    words = [_arg_source(ctx, a) for a in rest]
    sources = [_arg_source(ctx, a) for a in rest if a.text.endswith(".cu")]
    indent = line_indent(ctx.data, cmd.start)
    new = cmd.name.replace("cuda_", "", 1)
    lines = [f"{new}({' '.join([name, *words])})"]
    if sources:
        lines.append(f"set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)")
    if opts:
        lines.append(f"target_compile_options({name} PRIVATE {' '.join(_arg_source(ctx, a) for a in opts)})")
    text = f"\n{indent}".join(lines)
    return BuiltFix([Edit(cmd.start, cmd.end, text)], applicability="display-only",
                    description="Modern form (HIP language)")
