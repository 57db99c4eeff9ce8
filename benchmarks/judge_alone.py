#!/usr/bin/env python3
"""The judge alone, without vinci's C++ pool: for each candidate, a baseline and an evaluation through
one `python -m vinci_worker judge`, as the pool asks for them, and its verdict against the file's
labels. A GPU session can check the judge after building only vinci-sandbox and vinci-cpu-sampler
(seconds) instead of all of vinci (minutes).

    judge_alone.py --tasks DIR --sandbox BIN --device cuda [--cache DIR] [--out FILE] CANDIDATE...

A candidate names its task by a `# vinci-task:` header, or by its path (.../levelN/<task file>).
Prints a line per candidate and a count last; exits 1 when a label is not met. The static report
(kernel names) is the build step's, made here without importing the candidate.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))

from judge_process import JudgeProcess  # noqa: E402
from vinci_runner.importer import static_report  # noqa: E402


def header(source: str, name: str) -> str | None:
    m = re.search(rf"^#\s*vinci-{name}:\s*(\S+)\s*$", source, re.M)
    return m.group(1) if m else None


def task_of(path: str, source: str, tasks: str) -> str:
    named = header(source, "task")
    if named:
        return os.path.join(tasks, named + ".py")
    level = os.path.basename(os.path.dirname(path))
    return os.path.join(tasks, level, os.path.basename(path))


def met(expect: str | None, below: str | None, result: dict) -> bool:
    if expect is None:
        return result.get("class") == "correct"
    for alt in expect.split("|"):
        cls, _, reason = alt.partition("/")
        if cls == result.get("class") and reason in ("", result.get("reason")):
            if cls == "correct" and below is not None:
                return result.get("speedup_eager", float("inf")) < float(below)
            return True
    return False


def prebuild(a, config: dict) -> None:
    """Each candidate imported once by a build server (its load_inline calls compiled into the cache),
    build_jobs of them at once."""
    import concurrent.futures
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python"))
    t0 = time.monotonic()

    def build(path: str) -> str:
        source = open(path, encoding="utf-8").read()
        server = subprocess.Popen([sys.executable, "-m", "vinci_worker", "build-server", "--device", a.device,
                                   "--cache", a.cache, "--sandbox", a.sandbox,
                                   "--compile-timeout", str(config.get("compile_timeout_s", 900))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        server.stdout.readline()
        server.stdin.write(json.dumps({"candidate": os.path.abspath(path), "task": task_of(path, source, a.tasks),
                                       "scale": a.scale, "policy": {}, "import_timeout": 900}) + "\n")
        server.stdin.close()
        report = json.loads(server.stdout.readline() or "{}").get("report", {})
        server.wait(60)
        return f"{os.path.basename(path)}: {'built' if report.get('ok') else report.get('reason')}"

    with concurrent.futures.ThreadPoolExecutor(a.build_jobs) as pool:
        for line in pool.map(build, a.candidates):
            print(f"  build {line}", flush=True)
    print(f"builds: {time.monotonic() - t0:.0f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--sandbox", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--cache", default="/tmp/judge-alone-cache")
    ap.add_argument("--out", default="")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--config", default="{}", help="JSON merged into the judge's settings")
    ap.add_argument("--build-jobs", type=int, default=0,
                    help="first build every candidate's extensions with this many build servers at once (as the "
                         "pool's build step does on a GPU host), so that the judge finds them cached")
    ap.add_argument("candidates", nargs="+")
    a = ap.parse_args()
    config = {"compile_baseline": False, **json.loads(a.config)}
    if a.build_jobs:
        prebuild(a, config)
    judge = JudgeProcess(a.device, a.cache, a.sandbox)
    hello = judge.ask({"op": "hello"})
    print(f"judge: {hello.get('device_name')}, sandbox {hello.get('sandbox')}, clock {hello.get('clock')}, "
          f"warnings {hello.get('warnings')}", flush=True)
    baselines, failed, results = {}, 0, []
    # Each result is written as it comes, so that a run stopped at a device call's limit keeps them.
    out = open(a.out, "w", encoding="utf-8") if a.out else None
    for path in a.candidates:
        source = open(path, encoding="utf-8").read()
        task = os.path.abspath(task_of(path, source, a.tasks))
        t0 = time.monotonic()
        if task not in baselines:
            baselines[task] = judge.ask({"op": "baseline", "path": task, "scale": a.scale, "config": config})
        base = baselines[task]
        static, failure = static_report(source, open(task, encoding="utf-8").read(), {})
        if failure:
            result = {"ok": False, **failure}
        elif not base.get("ok"):
            result = {**base, "class": base.get("class", "invalid_task")}
        else:
            result = judge.evaluate(task, os.path.abspath(path), config,
                                    os.path.join(a.cache, "logs", os.path.basename(path) + ".log"), a.scale, base, static)
        ok = met(header(source, "expect"), header(source, "expect-speedup-below"), result)
        failed += not ok
        results.append({"candidate": path, "seconds": time.monotonic() - t0, "eager": base.get("eager"),
                        "calls_per_window": base.get("calls_per_window"), **result})
        if out:
            out.write(json.dumps(results[-1], default=str) + "\n")
            out.flush()
        print(f"{'ok  ' if ok else 'MISS'} {os.path.basename(path)[:60]:<60} {result.get('class')}/"
              f"{result.get('reason', '')} {result.get('speedup_eager', 0):.3g}x "
              f"{(result.get('message') or '')[:160]!r} ({time.monotonic() - t0:.1f} s)"
              f"{' clock: ' + result['external']['clock'] if 'external' in result else ''}", flush=True)
    # The drain is learnt on the first trusted runner and can be given up later: say how it ended.
    hello = judge.ask({"op": "hello"})
    print(f"judge at the end: clock {hello.get('clock')}, warnings {hello.get('warnings')}", flush=True)
    judge.close()
    if out:
        out.close()
    print(f"{len(results) - failed} of {len(results)} as labelled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
