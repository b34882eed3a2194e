"""The rewrite-fidelity property (issue 13): after `fix`, every changed line has an applied fix
that accounts for it, and every byte outside the edits is unchanged.

It is checked on what the fix loop records (fix.loop.Pass): per pass, the findings whose fixes
were applied and the byte ranges the pass changed. Then:
- per pass, every changed range lies on the lines of the edits of that pass's fixes (the only
  other change a pass makes is the realignment of a macro's continuation backslashes on an
  edited line), and every edit lies inside a changed range;
- over all passes, the final text is the original with the changed ranges replaced: mapping the
  ranges back through the passes leaves pieces of the original, which must appear in the final
  text, in order, byte for byte, with only the changed pieces between them;
- the file's own bytes survive reading and writing (encoding, BOM, line breaks), and `fix` on
  its own output changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cuda2hip.engine.frontends.registry import frontend
from cuda2hip.fix.loop import allowed_applicabilities
from cuda2hip.lang.source import SourceError, SourceText
from cuda2hip.settings import Settings


@dataclass
class Report:
    files: int = 0
    changed: int = 0
    lines: int = 0
    fixes: int = 0
    refused: dict[str, str] = field(default_factory=dict)  # path -> reason (not C/C++, binary, ...)
    problems: list[str] = field(default_factory=list)


def _line_span(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start of the line holding `start`, end of the line holding `end`)."""
    a = data.rfind(b"\n", 0, start) + 1
    b = data.find(b"\n", max(end - 1, start))
    return a, len(data) if b == -1 else b + 1


def _check_pass(before: bytes, fixed, changes) -> list[str]:
    edits = [e for f in fixed for e in f.fix.edits]
    lines: list[list[int]] = []  # the lines of the edits, adjacent ones merged
    for a, b in sorted(_line_span(before, e.start, e.end) for e in edits):
        if lines and a <= lines[-1][1]:
            lines[-1][1] = max(lines[-1][1], b)
        else:
            lines.append([a, b])
    out = []
    for c in changes:
        if not any(a <= c.old_start and c.old_end <= b for a, b in lines):
            out.append(f"bytes {c.old_start}-{c.old_end} changed off the lines of the applied edits")
        if not any(c.old_start <= e.start and e.end <= c.old_end for e in edits):
            out.append(f"bytes {c.old_start}-{c.old_end} changed by no applied edit")
    for e in edits:
        if not any(c.old_start <= e.start and e.end <= c.old_end for c in changes):
            out.append(f"edit at {e.start}-{e.end} ({e.text!r}) is in no change of its pass")
    return out


def _origins(origin: list[int], changes) -> list[int]:
    """Where each byte of the text after a pass comes from: its offset in the original, or -1
    for bytes a fix wrote. `origin`: the same for the text before the pass."""
    out: list[int] = []
    pos = 0
    for c in changes:
        out += origin[pos:c.old_start]
        out += [-1] * (c.new_end - c.new_start)
        pos = c.old_end
    out += origin[pos:]
    return out


def _unchanged_outside(before: bytes, after: bytes, changes) -> str | None:
    """Whether `after` is `before` with only the ranges of `changes` replaced."""
    pos = shift = 0
    for c in changes:
        if after[pos + shift:c.old_start + shift] != before[pos:c.old_start]:
            return f"bytes {pos}-{c.old_start} changed outside every edit"
        shift += (c.new_end - c.new_start) - (c.old_end - c.old_start)
        pos = c.old_end
    if after[pos + shift:] != before[pos:]:
        return f"bytes {pos}-{len(before)} changed outside every edit"
    return None


def check_outcome(original: bytes, final: bytes, outcome) -> list[str]:
    """Problems with the fix loop's `outcome`, which made `final` from `original` (UTF-8 text)."""
    problems = []
    if outcome.history and outcome.history[0].before != original:
        problems.append("the first pass edited another text than the file's")
    origin = list(range(len(original)))
    for n, p in enumerate(outcome.history, 1):
        after = outcome.history[n].before if n < len(outcome.history) else final
        problems += [f"pass {n}: {m}" for m in _check_pass(p.before, p.fixed, p.changes)]
        if (m := _unchanged_outside(p.before, after, p.changes)) is not None:
            problems.append(f"pass {n}: {m}")
        origin = _origins(origin, p.changes)
    if not outcome.history and final != original:
        problems.append("the text changed without any applied fix")
    # Together: every byte of the result that no fix wrote is a byte of the original, in order.
    if len(origin) != len(final):
        problems.append(f"the passes' changes account for {len(origin)} bytes, the result has {len(final)}")
        return problems
    last = -1
    for i, o in enumerate(origin):
        if o < 0:
            continue
        if final[i] != original[o] or o <= last:
            problems.append(f"byte {o} of the original is not kept in place outside the edits")
            break
        last = o
    return problems


def check_file(path: Path, engine, settings, report: Report) -> None:
    """Fix one file in memory (nothing is written) and check the property; add to `report`."""
    raw = path.read_bytes()
    language = settings.language_for(path) or "cuda"
    try:
        source = SourceText.from_bytes(raw, str(path), eight_bit=language != "python")
    except SourceError as exc:
        report.refused[str(path)] = exc.reason
        return
    if source.to_bytes() != raw:
        report.problems.append(f"{path}: reading and writing back changes the file")
    fe = frontend(language)
    rules = engine.ruleset_for(str(path), language)
    allowed = allowed_applicabilities(settings.unsafe_fixes)
    try:
        outcome = fe.fix(source, rules, settings, allowed)
    except SourceError as exc:  # not C/C++ at all
        report.refused[str(path)] = exc.reason
        return
    report.files += 1
    report.lines += source.data.count(b"\n")
    report.fixes += len(outcome.fixed)
    final = outcome.source.data
    if final != source.data:
        report.changed += 1
    report.problems += [f"{path}: {m}" for m in check_outcome(source.data, final, outcome)]
    if not outcome.converged:
        report.problems.append(f"{path}: the fixes did not settle")
        return
    again = fe.fix(outcome.source.with_data(final), rules, settings, allowed)
    if again.changed:
        report.problems.append(f"{path}: fix changes its own output ({len(again.fixed)} more fixes: "
                               f"{sorted({f.code for f in again.fixed})})")


def source_files(top: Path) -> list[Path]:
    """Every file below `top` that cuda2hip migrates (C/C++/CUDA, Python, CMake, Make)."""
    kinds = Settings()
    return sorted(p for p in top.rglob("*") if kinds.language_for(p) is not None and p.is_file()
                  and not p.is_symlink())


def corpus_roots(root: Path) -> dict[str, Path]:
    """The real code at hand: CUB and Thrust of the CUDA toolkit (CUDA 13 keeps them under
    include/cccl), the real-world corpus of bench/real_world.py (.cache/real-world/sources)."""
    cuda = Path(os.environ.get("CUDA_PATH", "/usr/local/cuda")) / "include"
    out = {}
    for name in ("cub", "thrust"):
        for candidate in (cuda / name, cuda / "cccl" / name):
            if candidate.is_dir():
                out[name] = candidate
                break
    real = root / ".cache" / "real-world" / "sources"
    if real.is_dir():
        out["real-world"] = real
    return out


def main(argv: list[str]) -> int:
    """`python tests/fidelity.py [--unsafe] [--roc] [--launch] [--all-rules] [DIR...]`: the
    property over every file of the directories (default: the corpora at hand), with figures;
    the flags: unsafe fixes too, the roc profile, launches to hipLaunchKernelGGL, every rule
    (opt-in ones included)."""
    import sys
    import time

    from cuda2hip.engine.engine import Engine

    flags = {a for a in argv if a.startswith("--")}
    dirs = [Path(a) for a in argv if not a.startswith("--")]
    roots = {str(d): d for d in dirs} or corpus_roots(Path(__file__).resolve().parents[1])
    failed = 0
    for name, top in roots.items():
        settings = Settings(root=top, use_cache=False, unsafe_fixes="--unsafe" in flags,
                            library_profile="roc" if "--roc" in flags else "hip",
                            kernel_launch="hip" if "--launch" in flags else "keep",
                            select=("ALL",) if "--all-rules" in flags else None)
        engine = Engine(settings)
        report = Report()
        t = time.perf_counter()
        for path in source_files(top):
            check_file(path, engine, settings, report)
        print(f"{name}: {report.files} files, {report.lines} lines, {report.changed} changed by "
              f"{report.fixes} applied fixes, {len(report.refused)} refused, {len(report.problems)} problems "
              f"({time.perf_counter() - t:.0f} s)")
        for m in report.problems[:50]:
            print("  " + m)
        for path, reason in list(report.refused.items())[:10]:
            print(f"  refused {path}: {reason}")
        failed += bool(report.problems)
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main(sys.argv[1:]))
