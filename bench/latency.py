"""The single-file and 10-file figures of bench/run.py: the latency pre-commit's hook meets,
each run on its own and through a resident server, beside the interpreter's own start-up, the
import time and (with valgrind) the instruction counts."""

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


def served_environment(env: dict, work: Path) -> dict:
    """The same runs through a resident server of the bench's own (`cuda2hip server start`)."""
    runtime = work / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    served = {k: v for k, v in env.items() if k != "CUDA2HIP_NO_SERVER"}
    served["CUDA2HIP_RUNTIME_DIR"] = str(runtime)
    return served


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
    """Single-file and 10-file `check --no-cache` (files just edited), each run on its own and
    through a resident server, alternating with `python -c pass` so that the floor is measured
    under the same load; then the import time of the single-file run (on its own). A served run
    starts once the server's next fork is primed, as between two commits (`spare_ready`)."""
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
    times: dict[str, list[float]] = {key: [] for key in (
        "floor", "one", "batch", "one_served", "batch_served",
        "tree_one", "tree_batch", "tree_one_served", "tree_batch_served")}
    served = served_environment(env, work)
    started = subprocess.run([*tool, "server", "start"], env=served, cwd=work, capture_output=True, text=True)
    if started.returncode != 0:
        raise SystemExit(f"cuda2hip server start failed:\n{started.stdout}{started.stderr}")

    def spare_ready() -> None:
        """Wait until the server's next fork has primed itself (~0.2 s after the last check):
        between two commits it always has; a check arriving sooner runs in a fork made then."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            got = subprocess.run([*tool, "server", "status"], env=served, cwd=work, capture_output=True, text=True)
            if "next fork ready" in got.stdout:
                return
            time.sleep(0.05)
        raise SystemExit(f"the resident server's next fork did not get ready:\n{got.stdout}{got.stderr}")

    def timed(cmd, run_env=env, cwd=work) -> float:
        if run_env is served:
            spare_ready()
        start = time.perf_counter()
        subprocess.run(cmd, env=run_env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
               "batch": timed([*tool, "check", "--no-cache", *paths["batch"]]),
               "one_served": timed([*tool, "check", "--no-cache", *paths["one"]], served),
               "batch_served": timed([*tool, "check", "--no-cache", *paths["batch"]], served)}
        for name, files in in_tree.items():
            for path in files:
                path.write_bytes(originals[path] + f"// edit {i}\n".encode())
            hook = [*tool, "check", "--format", "concise", *(str(p.relative_to(src)) for p in files)]
            got[f"tree_{name}"] = timed(hook, cwd=src)
            for path in files:
                path.write_bytes(originals[path] + f"// edit {i} served\n".encode())
            got[f"tree_{name}_served"] = timed(hook, served, cwd=src)
        if i >= 2:  # two warm-up rounds
            for name, ms in got.items():
                times[name].append(ms)
    for path, raw in originals.items():
        path.write_bytes(raw)
    status = subprocess.run([*tool, "server", "status"], env=served, cwd=work, capture_output=True, text=True)
    subprocess.run([*tool, "server", "stop"], env=served, cwd=work, capture_output=True)
    expected = 4 * (runs + 2)
    # every served run was the server's, each in a primed fork made ahead
    if f" {expected} checks served ({expected} by a fork made ahead)" not in status.stdout:
        raise SystemExit(f"the resident server did not serve the {expected} runs from primed forks:\n"
                         f"{status.stdout}{status.stderr}")
    imports = []
    for i in range(max(5, runs // 4)):
        one = dirs["one"] / "kernel0.cu"
        one.write_text(texts["one"][0] + f"// import {i}\n")
        res = subprocess.run([python, "-X", "importtime", "-m", "cuda2hip", "check", "--no-cache", str(one)],
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
            "single_file_check_served": {"lines": _text_lines(texts["one"][0]), **_stats(times["one_served"])},
            "batch_check_served": {"lines": sum(map(_text_lines, texts["batch"])), **_stats(times["batch_served"])},
            "import_ms": {"runs": len(imports), "median_ms": round(statistics.median(imports), 1)},
            **{f"{key}_check_in_tree{suffix}": {"lines": sum(_line_count(p) for p in in_tree[short]),
                                                **_stats(times[f"tree_{short}{suffix}"])}
               for key, short in (("single_file", "one"), ("batch", "batch")) for suffix in ("", "_served")},
            "in_tree_file": str(sample.relative_to(src))}
