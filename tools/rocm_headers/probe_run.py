"""Compile the probes of one release (probes.py) in batches: one translation unit per library with
every probe on a line of its own; clang's diagnostics (all of them: -ferror-limit=0) name the line
of each failing probe, directly, through the include chain of a header it pulls in, or through
the "requested here" notes of a template it instantiates. A batch with an error no line explains
is split in halves until each such error has its probe.

A header of the library that does not compile at the release is left out of its unit (and
recorded), so that one broken header does not fail every probe of the library.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .compilers import Compiler
from .probes import GROUP_DEFINES, GROUP_HEADERS, INCLUDE, Probe

FLAGS = ("-x", "hip", "-fsyntax-only", "-std=c++17", "-w", "-ferror-limit=0", "-fno-color-diagnostics")
DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note): (?P<msg>.*)$")
INCLUDED = re.compile(r"^(?:In file included from|\s+from) (?P<file>.+?):(?P<line>\d+):")
TIMEOUT = 900  # seconds for one translation unit


@dataclass
class Outcome:
    """What the compiler said of one probe: "" when it compiled, else its first error."""

    error: str = ""
    form: str = ""  # the form that passed (the probe's own, or "name" by the fallback)


@dataclass
class Unit:
    lines: list[str] = field(default_factory=list)
    owner: dict[int, int] = field(default_factory=dict)  # line (1-based) -> probe index
    prelude: dict[int, str] = field(default_factory=dict)  # line -> header included there

    def add(self, text: str, index: int | None = None, header: str | None = None) -> None:
        for part in text.split("\n"):
            self.lines.append(part)
            n = len(self.lines)
            if index is not None:
                self.owner[n] = index
            if header is not None:
                self.prelude[n] = header

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


class Runner:
    def __init__(self, compiler: Compiler, jobs: int = 2, log=None):
        self.compiler = compiler
        self.jobs = jobs
        self.log = log or (lambda msg: None)
        self.units = 0
        self.broken_headers: dict[str, str] = {}  # header -> first error, where it does not compile

    # ------------------------------------------------------------------ compiling

    def _compile(self, source: str, defines: tuple[str, ...]) -> tuple[str, list[dict]]:
        """(path of the source, the error groups of compiling it)."""
        self.units += 1
        with tempfile.TemporaryDirectory(prefix="cuda2hip-probe-") as tmp:
            path = os.path.join(tmp, "probe.hip")
            Path(path).write_text(source, encoding="utf-8")
            cmd = [*self.compiler.command, *FLAGS, *(f"-D{d}" for d in defines), path]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                                  env={**os.environ, **self.compiler.env}, cwd=tmp)
            groups = parse_diagnostics(proc.stderr + proc.stdout, path)
            if proc.returncode != 0 and not groups:
                groups = [{"msg": (proc.stderr or proc.stdout).strip()[-500:] or f"exit {proc.returncode}",
                           "lines": []}]
        return path, groups

    # ------------------------------------------------------------------ units

    def _prelude(self, group: str, unit: Unit, headers: list[str]) -> None:
        unit.add("#include <hip/hip_runtime.h>")
        for h in headers:
            unit.add(f"#if __has_include(<{h}>)")
            unit.add(f"#include <{h}>", header=h)
            unit.add("#endif")
        unit.add("#include <utility>")

    def headers_of(self, group: str, extra: list[str] = ()) -> list[str]:
        """The group's headers (and `extra` ones) that compile at this release."""
        wanted = list(dict.fromkeys([*GROUP_HEADERS.get(group, ()), *extra]))
        unit = Unit()
        self._prelude(group, unit, wanted)
        _, groups = self._compile(unit.source(), GROUP_DEFINES.get(group, ()))
        bad = {}
        for g in groups:
            for line in g["lines"]:
                if line in unit.prelude:
                    bad.setdefault(unit.prelude[line], g["msg"])
                    break
        for h, msg in bad.items():
            self.broken_headers[h] = msg
            self.log(f"  {h} does not compile: {msg}")
        return [h for h in wanted if h not in bad]

    def _unit(self, group: str, headers: list[str], probes: list[Probe], fallback: bool) -> Unit:
        unit = Unit()
        self._prelude(group, unit, headers)
        for i, p in enumerate(probes):
            code = p.fallback if fallback else p.code
            if code.startswith("#"):  # its own namespace line inside
                unit.add(code.replace("namespace n {", f"namespace p{i} {{"), i)
            else:
                unit.add(f"namespace p{i} {{ {code} }}", i)
        return unit

    def _batch(self, group: str, headers: list[str], probes: list[Probe], fallback: bool) -> dict[int, str]:
        """Index -> first error of the probes that fail (split where an error names no probe)."""
        if not probes:
            return {}
        unit = self._unit(group, headers, probes, fallback)
        _, groups = self._compile(unit.source(), GROUP_DEFINES.get(group, ()))
        failed: dict[int, str] = {}
        unexplained = []
        for g in groups:
            owner = next((unit.owner[n] for n in g["lines"] if n in unit.owner), None)
            if owner is None:
                unexplained.append(g["msg"])
            else:
                failed.setdefault(owner, g["msg"])
        if unexplained:
            if len(probes) == 1:
                failed.setdefault(0, unexplained[0])
            else:
                half = len(probes) // 2
                left = self._batch(group, headers, probes[:half], fallback)
                right = self._batch(group, headers, probes[half:], fallback)
                failed = {**left, **{half + i: e for i, e in right.items()}}
        return failed

    def run_group(self, group: str, probes: list[Probe], headers: list[str]) -> dict[str, Outcome]:
        out = {p.key: Outcome(form=p.form) for p in probes}
        failed = self._batch(group, headers, probes, fallback=False)
        retry = [(i, probes[i]) for i in sorted(failed) if probes[i].fallback]
        second = self._batch(group, headers, [p for _, p in retry], fallback=True) if retry else {}
        retried = {i for i, _ in retry}
        for i, error in failed.items():
            p = probes[i]
            if i in retried:
                j = [k for k, _ in retry].index(i)
                if j not in second:
                    out[p.key] = Outcome("", "name")
                    continue
            out[p.key] = Outcome(_short(error), p.form)
        return out

    def run_includes(self, probes: list[Probe]) -> dict[str, Outcome]:
        out = {p.key: Outcome(form="include") for p in probes}
        unit = Unit()
        unit.add("#include <hip/hip_runtime.h>")
        for i, p in enumerate(probes):
            h = p.key
            unit.add(f"#if __has_include(<{h}>)")
            unit.add(f"#include <{h}>", i)
            unit.add("#else")
            unit.add(f"#error \"no header {h}\"", i)
            unit.add("#endif")
        _, groups = self._compile(unit.source(), ())
        for g in groups:
            # the outermost line of the probe file: the #include that brought the error in
            owner = next((unit.owner[n] for n in g["lines"] if n in unit.owner), None)
            if owner is not None and not out[probes[owner].key].error:
                out[probes[owner].key] = Outcome(_short(g["msg"]), "include")
        return out

    def run(self, probes: list[Probe], extra: dict[str, list[str]] | None = None) -> dict[str, Outcome]:
        """Compile `probes`; `extra`: group -> more headers its unit includes."""
        by_group: dict[str, list[Probe]] = {}
        for p in probes:
            by_group.setdefault(p.group, []).append(p)
        results: dict[str, Outcome] = {}

        def one(group: str) -> dict[str, Outcome]:
            batch = by_group[group]
            if group == INCLUDE:
                return self.run_includes(batch)
            headers = self.headers_of(group, (extra or {}).get(group, []))
            got = self.run_group(group, batch, headers)
            bad = sum(1 for o in got.values() if o.error)
            self.log(f"  {group}: {len(batch)} probes, {bad} fail")
            return got

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for got in pool.map(one, sorted(by_group, key=lambda g: -len(by_group[g]))):
                results.update(got)
        return results


def parse_diagnostics(text: str, path: str) -> list[dict]:
    """The errors of a compiler run: {"msg": first line, "lines": lines of `path` it names (its own
    location, the include chain that led to it, the notes after it)}."""
    groups: list[dict] = []
    chain: list[int] = []
    current = None
    for line in text.splitlines():
        m = INCLUDED.match(line)
        if m:
            if m.group("file") == path:
                chain.append(int(m.group("line")))
            continue
        m = DIAG.match(line)
        if not m:
            continue
        here = [int(m.group("line"))] if m.group("file") == path else []
        if m.group("sev") in ("error", "fatal error"):
            # the probe line itself first, then the outermost include (the probe file's)
            current = {"msg": m.group("msg"), "lines": here + chain[-1:] + chain}
            groups.append(current)
        elif m.group("sev") == "note" and current is not None:
            current["lines"] += here
        chain = []
    return groups


def _short(error: str) -> str:
    return error if len(error) <= 300 else error[:297] + "..."
