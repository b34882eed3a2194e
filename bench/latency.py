"""The single-file and 10-file figures of bench/run.py: the latency pre-commit's hook meets,
beside the interpreter's own start-up, the import time and (with valgrind) the instruction
counts."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

BATCH = 10
# The single-file figure's file: a typical translation unit, not the corpus's median file (an
# 8-line .cu in llama.cpp's tree measures start-up alone).
SINGLE_FILE_LINES = 200


def _stats(times: list[float]) -> dict:
    return {"runs": len(times), "median_ms": round(statistics.median(times), 1),
            "min_ms": round(min(times), 1), "max_ms": round(max(times), 1)}


def _import_ms(stderr: str) -> float:
    """The time -X importtime reports for the top-level imports of a run (each one includes the
    modules it imports)."""
    total = 0
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            _, cumulative, name = line.split("|")
            if not name.startswith("  ") and cumulative.strip().isdigit():
                total += int(cumulative)
    return total / 1000


def _text_lines(text: str) -> int:
    """Lines as `_line_count` counts them (a last line without its newline counts too)."""
    return text.count("\n") + (not text.endswith("\n") and bool(text))


def _line_count(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def instructions(cmd: list[str], env: dict, cwd: Path) -> float | None:
    """The instructions (millions) `cmd` runs, counted by valgrind's callgrind: unlike times, the
    count does not move with the machine's load (string hashing is seeded, so that it does not
    move between runs either). None without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    with tempfile.TemporaryDirectory() as out:
        res = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.out", *cmd],
                             env={**env, "PYTHONHASHSEED": "0"}, cwd=cwd, capture_output=True, text=True)
    found = [line for line in res.stderr.splitlines() if "Collected :" in line]
    return round(int(found[-1].split(":")[-1]) / 1e6, 1) if found else None


def latency(tool: list[str], python: str, env: dict, work: Path, src: Path, runs: int) -> dict:
    """Single-file and 10-file `check --no-cache` (files just edited, copied alone into a
    folder), and the same files edited in their tree and checked as pre-commit's hook does,
    alternating with `python -c pass` so that the floor is measured under the same load; then
    the import time and the instructions of the single-file run."""
    sizes = sorted((p.stat().st_size, p) for p in src.rglob("*.cu"))
    if not sizes:
        raise SystemExit("the corpus has no .cu file for the single-file figures")
    picks = [sizes[len(sizes) * k // (BATCH + 1)][1] for k in range(1, BATCH + 1)]
    sample = min((abs(_line_count(p) - SINGLE_FILE_LINES), str(p), p) for _, p in sizes)[2]
    texts = {"one": [sample.read_text(errors="replace")], "batch": [p.read_text(errors="replace") for p in picks]}
    dirs = {}
    for name, contents in texts.items():
        dirs[name] = work / name
        dirs[name].mkdir()
    # The same files edited in their own tree (their local headers there, the result cache
    # filled by the run over the tree before): what pre-commit's hook meets on a commit. The
    # standalone copies above follow no header; these do, as a check in a repository does.
    in_tree = {"one": [sample], "batch": picks}
    originals = {p: p.read_bytes() for p in {sample, *picks}}
    times: dict[str, list[float]] = {key: [] for key in ("floor", "one", "batch", "tree_one", "tree_batch")}

    def timed(cmd, cwd=work) -> float:
        start = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return (time.perf_counter() - start) * 1000

    for i in range(runs + 2):
        paths = {}
        for name, contents in texts.items():
            paths[name] = []
            for k, text in enumerate(contents):
                path = dirs[name] / f"kernel{k}.cu"
                path.write_text(text + f"// edit {i}\n")  # a changed file: not in the result cache
                paths[name].append(str(path))
        got = {"floor": timed([python, "-c", "pass"]),
               "one": timed([*tool, "check", "--no-cache", *paths["one"]]),
               "batch": timed([*tool, "check", "--no-cache", *paths["batch"]])}
        for name, files in in_tree.items():
            for path in files:
                path.write_bytes(originals[path] + f"// edit {i}\n".encode())
            got[f"tree_{name}"] = timed([*tool, "check", "--format", "concise",
                                         *(str(p.relative_to(src)) for p in files)], cwd=src)
        if i >= 2:  # two warm-up rounds
            for name, ms in got.items():
                times[name].append(ms)
    for path, raw in originals.items():
        path.write_bytes(raw)
    imports = []
    for i in range(max(5, runs // 4)):
        one = dirs["one"] / "kernel0.cu"
        one.write_text(texts["one"][0] + f"// import {i}\n")
        res = subprocess.run([python, "-X", "importtime", "-P", "-m", "cuda2hip", "check", "--no-cache", str(one)],
                             env=env, cwd=work, capture_output=True, text=True)
        imports.append(_import_ms(res.stderr))
    one = dirs["one"] / "kernel0.cu"
    one.write_text(texts["one"][0] + "// counted\n")
    counted = {"floor": instructions([python, "-c", "pass"], env, work),
               "single_file_check": instructions([*tool, "check", "--no-cache", str(one)], env, work)}
    return {"floor": _stats(times["floor"]),
            "instructions_m": counted if None not in counted.values() else None,
            "single_file_check": {"lines": _text_lines(texts["one"][0]), **_stats(times["one"])},
            "batch_check": {"lines": sum(map(_text_lines, texts["batch"])), **_stats(times["batch"])},
            "import_ms": {"runs": len(imports), "median_ms": round(statistics.median(imports), 1)},
            **{f"{key}_check_in_tree": {"lines": sum(_line_count(p) for p in in_tree[short]),
                                        **_stats(times[f"tree_{short}"])}
               for key, short in (("single_file", "one"), ("batch", "batch"))},
            "in_tree_file": str(sample.relative_to(src))}
