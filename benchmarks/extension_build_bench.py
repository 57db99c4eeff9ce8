"""CUDA extension builds as the evaluator runs them (`python -m vinci_runner compile`, N at once),
outside the sandbox so that only the compile is timed, in three ways: without a precompiled
torch/extension.h; with it, the CUDA sources as written (`--as-written`); and with it, the CUDA
sources first built without their torch/extension.h includes (the evaluator's way).

Each solution's load_inline arguments are captured by running it with load_inline replaced; the
cuda-flavour header is precompiled once (`python -m vinci_runner precompile`, timed); then every
solution is built into a fresh folder each way. Per-object times come from each build's
.ninja_log: main.o is the C++ file the header serves, cuda.cuda.o nvcc's (the build that
succeeded; a build whose lean nvcc run failed says so in its log and counts as retried). With
--phases, nvcc also writes each phase's time (`nvcc --time`) and a table says where nvcc's time goes:
preprocessing (twice: for the host side and for the device side), cudafe++ (splits host from device
code), cicc (device code to PTX), ptxas (PTX to machine code), fatbinary, and the host compile of
cudafe++'s output; then main.o and the link, from the .ninja_log.

    python3 benchmarks/extension_build_bench.py OUT_DIR SOLUTION.py ... [--parallel 16] [--modes lean] [--phases]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from vinci_runner.compile import RETRY_NOTE  # noqa: E402


class Captured(Exception):
    pass


def capture_arguments(path: str) -> dict:
    """The solution's load_inline arguments in the canonical shape the evaluator sends to a build."""
    import torch.utils.cpp_extension as cpp_extension
    from vinci_runner.loader import load_inline_arguments

    real = cpp_extension.load_inline
    seen = {}

    def recorder(*args, **kwargs):
        seen.update(load_inline_arguments(*args, **kwargs))
        raise Captured

    cpp_extension.load_inline = recorder
    try:
        source = open(path, encoding="utf-8").read()
        exec(compile(source, path, "exec"), {"__name__": "solution", "__file__": path})
    except Captured:
        pass
    finally:
        cpp_extension.load_inline = real
    if not seen:
        raise SystemExit(f"{path}: no load_inline call at import")
    return seen


def ninja_times(build_dir: str) -> dict[str, float]:
    """Seconds per object of the build's .ninja_log (its last entry per target; ninja logs no
    failed command, so a failed lean nvcc run is not there)."""
    times = {}
    with open(os.path.join(build_dir, ".ninja_log"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, target, _ = line.rstrip("\n").split("\t")
            times[target] = (int(end) - int(start)) / 1000.0
    return times


def nvcc_phases(csv_file: str) -> dict[str, float]:
    """Seconds per nvcc phase of one build, from `nvcc --time`'s CSV (its two preprocessing runs added
    up; a retried build's runs added up too)."""
    phases: dict[str, float] = {}
    if not os.path.exists(csv_file):
        return phases
    with open(csv_file, encoding="utf-8") as f:
        for line in f.readlines()[1:]:
            cells = [c.strip() for c in line.split(",")]
            if len(cells) < 8 or cells[7] != "ms":
                continue
            name = "gcc (preprocessing)" if cells[1].startswith("gcc (preprocessing") else cells[1]
            phases[name] = phases.get(name, 0.0) + float(cells[6]) / 1000.0
    return phases


def build(repo: str, arguments_file: str, out: str, pch: str, as_written: bool,
          phases: bool = False) -> tuple[float, dict[str, float], int]:
    env = dict(os.environ, PYTHONPATH=os.path.join(repo, "python"), MAX_JOBS="2")
    os.makedirs(out)
    if phases:
        with open(arguments_file, encoding="utf-8") as f:
            arguments = json.load(f)
        arguments["extra_cuda_cflags"] = list(arguments.get("extra_cuda_cflags") or []) + \
            ["--time", os.path.join(out, "nvcc-time.csv")]
        arguments_file = os.path.join(out, "arguments.json")
        with open(arguments_file, "w", encoding="utf-8") as f:
            json.dump(arguments, f)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "vinci_runner", "compile", "--arguments", arguments_file,
                           "--out", out, "--pch", pch] + (["--as-written"] if as_written else []),
                          env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    retried = RETRY_NOTE in proc.stderr
    if proc.returncode != 0:
        print(f"{arguments_file}: build failed\n{proc.stderr[-3000:]}", file=sys.stderr)
    times = ninja_times(out) if os.path.exists(os.path.join(out, ".ninja_log")) else {}
    times.update({f"nvcc: {k}": v for k, v in nvcc_phases(os.path.join(out, "nvcc-time.csv")).items()})
    return wall, dict(times, retried=float(retried)), proc.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("solutions", nargs="+")
    p.add_argument("--parallel", type=int, default=16)
    p.add_argument("--modes", default="none,pch,lean", help="which of none, pch and lean to build, in order")
    p.add_argument("--phases", action="store_true", help="time nvcc's phases too (nvcc --time)")
    a = p.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(a.out, exist_ok=True)
    argument_files = []
    for i, path in enumerate(a.solutions):
        arguments = capture_arguments(path)
        f = os.path.join(a.out, f"arguments-{i}.json")
        with open(f, "w") as out:
            json.dump(arguments, out)
        argument_files.append(f)
    flags = sorted({json.dumps(json.load(open(f)).get("extra_cflags") or []) for f in argument_files})
    if len(flags) != 1:
        print(f"the solutions use {len(flags)} flag lists; one header serves one: {flags}", file=sys.stderr)

    pch = os.path.join(a.out, "pch")
    flags_file = os.path.join(a.out, "flags.json")
    with open(flags_file, "w") as f:
        json.dump({"extra_cflags": json.loads(flags[0]), "with_cuda": True}, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(repo, "python"))
    t0 = time.monotonic()
    rc = subprocess.run([sys.executable, "-m", "vinci_runner", "precompile", "--flags", flags_file, "--out", pch],
                        env=env).returncode
    header_s = time.monotonic() - t0
    if rc != 0:
        print("the header did not precompile (or GCC would not use it)", file=sys.stderr)
        return 1

    rows = []
    modes = {"none": ("none, as written", "", True), "pch": ("precompiled, as written", pch, True),
             "lean": ("precompiled, lean .cu", pch, False)}
    phase_rows = []
    for tag in a.modes.split(","):
        mode, folder, as_written = modes[tag]
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(a.parallel) as pool:
            results = list(pool.map(
                lambda i: build(repo, argument_files[i], os.path.join(a.out, f"{tag}-{i}"), folder, as_written,
                                a.phases),
                range(len(argument_files))))
        wall = time.monotonic() - t0
        failed = sum(1 for r in results if r[2] != 0)
        main_o = [r[1]["main.o"] for r in results if "main.o" in r[1]]
        cuda_o = [r[1]["cuda.cuda.o"] for r in results if "cuda.cuda.o" in r[1]]
        retried = sum(int(r[1].get("retried", 0)) for r in results)
        rows.append((mode, wall, statistics.mean(r[0] for r in results), statistics.mean(main_o) if main_o else 0,
                     statistics.mean(cuda_o) if cuda_o else 0, retried, failed))
        if a.phases:
            built = [r[1] for r in results if r[2] == 0]
            names = sorted({k for r in built for k in r if k.startswith("nvcc: ")}, key=lambda k: -sum(
                r.get(k, 0.0) for r in built))
            links = [v for r in built for k, v in r.items() if k.endswith(".so")]
            phase_rows.append((mode, [(k[6:], statistics.mean(r.get(k, 0.0) for r in built)) for k in names] +
                               [("main.o (g++, the bindings)", statistics.mean(main_o) if main_o else 0.0),
                                ("link", statistics.mean(links) if links else 0.0)]))
    print(f"\nheader precompiled in {header_s:.1f} s ({len(argument_files)} solutions, {a.parallel} at once)")
    print("| header, CUDA sources | wall s | mean build s | mean main.o s | mean cuda.cuda.o s | retried | failed |")
    print("|---|---|---|---|---|---|---|")
    for mode, wall, mean, m, c, retried, failed in rows:
        print(f"| {mode} | {wall:.1f} | {mean:.1f} | {m:.1f} | {c:.1f} | {retried} | {failed} |")
    for mode, phases in phase_rows:
        print(f"\nwhere a build's time goes ({mode}; mean seconds a build, {a.parallel} at once)")
        print("| step | mean s |\n|---|---|")
        for name, seconds in phases:
            print(f"| {name} | {seconds:.2f} |")
    return 1 if any(r[6] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
