"""cuda2hip benchmark: one command, figures for docs/benchmarks.md.

    python bench/run.py                  # generate a 250,000-line corpus and measure
    python bench/run.py --corpus DIR     # measure on your own tree (it is copied, never changed)
    python bench/run.py --real-world "llama.cpp ggml-cuda"   # a code base of the real-world corpus
                                         # (bench/realworld/corpus.toml; fetched into .cache/real-world)
    python bench/run.py --json out.json  # also write the figures as JSON

It measures, each as a real `cuda2hip` process (start to exit, as a user or pre-commit runs it):
- `check` and `fix` over the tree, in source lines per second (cold: --no-cache); `fix` both in
  place (on a copy) and with --output-dir;
- a second `check` of the unchanged tree (served by the result cache);
- the parse floor: the same interpreter only parsing every source file once with cuda2hip's
  tree-sitter-cuda parser (bench/parse_floor.py), in one process and on as many processes as
  cuda2hip uses: no run goes below it;
- single-file latency: the corpus's `.cu` closest to SINGLE_FILE_LINES and a 10-file batch,
  copied alone into a folder and checked with `--no-cache` (one process, no cache), and the same
  files edited in place in their tree and checked as pre-commit's hook does (`check --format
  concise FILES`, the result cache on, filled by a check of the tree before: their local headers
  are read, as in a repository); medians of N runs, paired with runs of `python -c pass` (the
  interpreter's own start-up, the floor no Python tool goes below), and the time the
  single-file run spends importing modules (`-X importtime`);
- peak memory: the largest sum of RSS over the process and its workers, sampled;
- where valgrind is installed, the instructions of the floor and of the single-file check
  (callgrind): a figure the machine's load does not move.

Targets (issue 32): the single-file check (one process, no cache) <= the floor + 50 ms; the
10-file batch <= 1.5 x the single file; `fix --no-cache --output-dir` over the tree <= 2 x the
single-process parse floor measured in the same run (its ratio to the parse floor on as many
processes is printed too); peak RSS <= 300 MB. The load average is printed too: other work on
the machine slows every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import generate  # noqa: E402
from latency import BATCH, latency  # noqa: E402
from parse_floor import SOURCE_SUFFIXES  # noqa: E402

TARGETS = {"fix_over_parse_floor": 2.0, "single_file_over_floor_ms": 50, "batch_over_single": 1.5,
           "peak_rss_mb": 300}


REPO = HERE.parent


def cuda2hip_command() -> list[str]:
    exe = shutil.which("cuda2hip", path=str(Path(sys.executable).parent)) or shutil.which("cuda2hip")
    return [exe] if exe else [sys.executable, "-m", "cuda2hip"]


def installed_command(work: Path) -> list[str] | None:
    """cuda2hip installed the way pre-commit installs a hook: `pip install <repo>` (not
    editable, bytecode compiled) into a fresh virtualenv. None when that fails (offline)."""
    venv = work / "venv"
    print("installing cuda2hip into a fresh virtualenv (as pre-commit does) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    res = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(REPO)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        print(f"pip install failed; measuring the current installation instead:\n{res.stderr[-2000:]}",
              file=sys.stderr)
        return None
    return [str(venv / "bin" / "cuda2hip")]


def environment(cache: Path) -> dict:
    """The runs' environment: a cache of the bench's own, no progress bar."""
    env = dict(os.environ, CUDA2HIP_CACHE_DIR=str(cache), CUDA2HIP_NO_PROGRESS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    return env


def source_lines(tree: Path) -> tuple[int, int]:
    files = lines = 0
    for p in tree.rglob("*"):
        if p.suffix.lower() in SOURCE_SUFFIXES and p.is_file() and not p.is_symlink():
            files += 1
            with open(p, "rb") as fh:
                lines += sum(1 for _ in fh)
    return files, lines


def measure(cmd: list[str], env: dict, cwd: Path, exact: bool = False) -> dict:
    """Wall time, CPU time and peak RSS (process + workers, sampled every 20 ms) of one run.
    `exact`: only exit status 0 counts (a parse floor that failed part-way would be too low)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = psutil.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        total = 0
        try:
            for p in [proc, *proc.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.02)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    err = proc.stderr.read().decode(errors="replace")
    # 2 without a run-level error on stderr: the run finished, some files were left untouched
    # (real trees hold files that are not C++, e.g. cuda-samples' GLSL shaders in .cpp files).
    failed = any(line.startswith(("cuda2hip: error", "Error:", "Usage:", "Traceback")) for line in err.splitlines())
    if (exact and proc.returncode != 0) or (proc.returncode not in (0, 1) and not (proc.returncode == 2 and not failed)):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": wall, "cpu_seconds": cpu, "peak_rss_mb": peak / 2**20}


def machine() -> dict:
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "platform": platform.platform(), "load_average": os.getloadavg()}


def stage_real_world(name: str, dest: Path) -> None:
    """The input tree of a code base of the real-world corpus (bench/realworld), fetched into
    .cache/real-world on first use, as bench/real_world.py migrates it."""
    from realworld import config, fetch, units

    sources, codebases = config.load()
    chosen = [c for c in codebases if c.name == name]
    if not chosen:
        raise SystemExit(f"--real-world: no code base {name!r} (known: {', '.join(c.name for c in codebases)})")
    cache = Path(os.environ.get("CUDA2HIP_REAL_WORLD_CACHE", REPO / ".cache" / "real-world"))
    root = fetch.fetch(sources[chosen[0].source], cache)
    units.stage(chosen[0], root, dest)


def main() -> None:
    ap = argparse.ArgumentParser(description="cuda2hip benchmark (see the module docstring)")
    ap.add_argument("--corpus", type=Path, help="measure this tree (default: generate one)")
    ap.add_argument("--real-world", metavar="CODEBASE",
                    help="measure this code base of bench/realworld/corpus.toml (fetched on first use)")
    ap.add_argument("--lines", type=int, default=250_000, help="size of the generated corpus")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tree figure (best is kept)")
    ap.add_argument("--single", type=int, default=21, help="runs of the single-file check")
    ap.add_argument("--jobs", type=int, help="--jobs for cuda2hip (default: CPU count)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--current-env", action="store_true",
                    help="measure the cuda2hip of this environment (e.g. an editable install, whose "
                         "import hook adds start-up time) instead of a fresh non-editable install")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cuda2hip-bench-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def run(args, work: Path) -> dict:
    cache = work / "cache"
    env = environment(cache)
    tool = None if args.current_env else installed_command(work)
    installed = tool is not None
    tool = tool or cuda2hip_command()
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    src = work / "src"
    if args.real_world:
        stage_real_world(args.real_world, src)
    elif args.corpus:
        shutil.copytree(args.corpus, src, symlinks=True)
    else:
        generate(src, args.lines)
    files, lines = source_lines(src)
    name = args.real_world or (str(args.corpus) if args.corpus else "generated by bench/corpus.py")
    results: dict = {"machine": machine(), "corpus": {"files": files, "lines": lines, "name": name,
                                                      "generated": not (args.corpus or args.real_world)},
                     "installation": "fresh virtualenv, pip install (as pre-commit)" if installed
                     else f"current environment ({tool[0]})"}
    # Warm-up: bytecode and the rule cache exist afterwards, as after installation.
    subprocess.run([*tool, "check", "--no-cache", str(next(src.rglob("*.cu")))], env=env,
                   capture_output=True)

    def best(make_cmd, prepare=None, exact=False) -> dict:
        runs = []
        for _ in range(args.repeat):
            if prepare:
                prepare()
            runs.append(measure(make_cmd(), env, work, exact))
        fastest = min(runs, key=lambda r: r["seconds"])
        return {"seconds": round(fastest["seconds"], 3), "lines_per_s": round(lines / fastest["seconds"]),
                "cpu_seconds": round(fastest["cpu_seconds"], 2),
                "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1)}

    # The concise report (pre-commit's): the text report's code frames for tens of thousands of
    # findings would measure the report, not the analysis.
    results["check"] = best(lambda: [*tool, "check", "--no-cache", "--format", "concise", *jobs, "src"])

    inplace = work / "inplace"

    def fresh_copy():
        shutil.rmtree(inplace, ignore_errors=True)
        shutil.copytree(src, inplace, symlinks=True)

    results["fix_in_place"] = best(lambda: [*tool, "fix", "--no-cache", *jobs, "inplace"], fresh_copy)
    out = work / "out"
    results["fix_output_dir"] = best(
        lambda: [*tool, "fix", "--no-cache", *jobs, "--output-dir", "out", "src"],
        lambda: shutil.rmtree(out, ignore_errors=True))
    # The parse floor: the same interpreter only parses every source file once, in one process
    # and on as many processes as cuda2hip uses (bench/parse_floor.py).
    python = str(Path(tool[0]).parent / "python") if installed else sys.executable
    jobs_used = args.jobs or os.cpu_count() or 1
    results["parse_floor"] = best(lambda: [python, str(HERE / "parse_floor.py"), "src", "--jobs", "1"], exact=True)
    results["parse_floor_parallel"] = best(lambda: [python, str(HERE / "parse_floor.py"), "src", "--jobs",
                                                    str(jobs_used)], exact=True)
    results["parse_floor_parallel"]["jobs"] = jobs_used
    # Cached: a first run fills the cache, then an unchanged tree is checked again.
    subprocess.run([*tool, "check", "--format", "concise", *jobs, "src"], cwd=work, env=env,
                   capture_output=True)
    results["check_cached"] = best(lambda: [*tool, "check", "--format", "concise", *jobs, "src"])

    # The floor: the interpreter that runs cuda2hip (the virtualenv's, or this one).
    results.update(latency(tool, python, env, work, src, args.single))
    peak = max(results[k]["peak_rss_mb"] for k in ("check", "fix_in_place", "fix_output_dir"))
    floor = results["floor"]["median_ms"]
    fix = results["fix_output_dir"]["seconds"]
    single, batch = results["single_file_check"]["median_ms"], results["batch_check"]["median_ms"]
    values = {"fix_over_parse_floor": (round(fix / results["parse_floor"]["seconds"], 2), "<="),
              "single_file_over_floor_ms": (round(single - floor, 1), "<="),
              "batch_over_single": (round(batch / single, 2), "<="),
              "peak_rss_mb": (peak, "<=")}
    results["fix_over_parallel_parse_floor"] = round(fix / results["parse_floor_parallel"]["seconds"], 2)
    results["targets"] = {}
    for key, (value, sense) in values.items():
        results["targets"][key] = {"target": f"{sense} {TARGETS[key]:,}", "value": value,
                                   "met": value <= TARGETS[key]}
    results["machine"]["load_average_after"] = os.getloadavg()
    return results


def report(r: dict) -> None:
    m, c = r["machine"], r["corpus"]
    print(f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, {m['platform']}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in m['load_average'])} before, "
          f"{' '.join(f'{x:.2f}' for x in m['load_average_after'])} after")
    print(f"cuda2hip: {r['installation']}")
    print(f"corpus: {c['files']} source files, {c['lines']:,} lines ({c['name']})")
    print()
    print(f"{'run':<34}{'seconds':>9}{'lines/s':>11}{'CPU s':>8}{'peak RSS':>11}")
    for key, label in (("check", "check (no cache, concise)"), ("fix_in_place", "fix in place (no cache)"),
                       ("fix_output_dir", "fix --output-dir (no cache)"),
                       ("check_cached", "check again (cached, concise)"),
                       ("parse_floor", "parse only, 1 process"),
                       ("parse_floor_parallel", f"parse only, {r['parse_floor_parallel']['jobs']} processes")):
        x = r[key]
        print(f"{label:<34}{x['seconds']:>9.2f}{x['lines_per_s']:>11,}{x['cpu_seconds']:>8.1f}"
              f"{x['peak_rss_mb']:>8.0f} MB")
    print(f"fix --output-dir: {r['targets']['fix_over_parse_floor']['value']} x the parse floor in one process, "
          f"{r['fix_over_parallel_parse_floor']} x on {r['parse_floor_parallel']['jobs']}")
    f, imp = r["floor"], r["import_ms"]
    print(f"python -c pass (floor, {f['runs']} runs): median {f['median_ms']:.1f} ms (min {f['min_ms']:.1f})")
    print(f"single-file and {BATCH}-file checks (medians of {f['runs']} runs; min, max):")
    for label, key in (
            ("the file copied alone, check --no-cache", "single_file_check"),
            (f"the {BATCH} files copied alone, check --no-cache", "batch_check"),
            (f"{r['in_tree_file']}, edited in its tree (hook: check, cache on)", "single_file_check_in_tree"),
            (f"{BATCH} files edited in their tree (hook: check, cache on)", "batch_check_in_tree")):
        x = r[key]
        print(f"  {label} ({x['lines']} lines): {x['median_ms']:.1f} ms ({x['min_ms']:.1f}, {x['max_ms']:.1f})")
    print(f"  of the copied file's check, importing modules: median {imp['median_ms']:.1f} ms")
    counted = r.get("instructions_m")
    if counted:
        print(f"instructions (callgrind, load-independent): floor {counted['floor']:,.1f} M, single-file check "
              f"{counted['single_file_check']:,.1f} M ({counted['single_file_check'] - counted['floor']:,.1f} M over "
              "the floor)")
    print()
    for name, t in r["targets"].items():
        print(f"target {name}: {t['value']:,} ({t['target']}): {'met' if t['met'] else 'NOT MET'}")
    print("(single-file figures are paired with the floor: the runs alternate, so load affects both)")


if __name__ == "__main__":
    main()
