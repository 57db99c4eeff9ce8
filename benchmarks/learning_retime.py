#!/usr/bin/env python3
"""Compares each bench's verdicts with the same candidates timed again (benchmarks/learning_retime.sh):
per bench, the tasks timed again, fast_1 then and now over the bench's tasks, the tasks whose fast_1
verdict flipped, and the median ratio of the two speedups. Correctness does not depend on timing,
so a class that changed is listed too.

    learning_retime.py OUT_DIR   (bench-NAME-attempts.jsonl and retime-NAME.jsonl in it)
"""
import json
import pathlib
import statistics
import sys


def jsonl(path: pathlib.Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    print(f"{'bench':<16} {'tasks':>5} {'timed again':>11} {'fast_1 then':>11} {'fast_1 now':>10} {'flipped':>7} "
          f"{'median now/then':>15}")
    for attempts_path in sorted(out.glob("bench-*-attempts.jsonl")):
        name = attempts_path.name[len("bench-"):-len("-attempts.jsonl")]
        then = {a["task"]: a for a in jsonl(attempts_path)}
        now = {r["task"]: r for r in jsonl(out / f"retime-{name}.jsonl")}
        fast = lambda cls, speedup: cls == "correct" and (speedup or 0) > 1.0
        flipped, ratios, changed_class = [], [], []
        for task, r in now.items():
            a = then.get(task)
            if not a:
                continue
            before, after = fast(a["class"], a["speedup"]), fast(r["class"], r.get("speedup_eager"))
            if before != after:
                flipped.append(f"{task} {a['speedup']:.3f}x -> {r.get('speedup_eager') or 0:.3f}x")
            if a["class"] != r["class"]:
                changed_class.append(f"{task} {a['class']} -> {r['class']}")
            if a["class"] == r["class"] == "correct" and a["speedup"] and r.get("speedup_eager"):
                ratios.append(r["speedup_eager"] / a["speedup"])
        tasks = len(then)
        fast_then = sum(fast(a["class"], a["speedup"]) for a in then.values()) / tasks if tasks else 0
        # Tasks not timed again (the deadline) keep their first verdict.
        fast_now = sum(fast(now[t]["class"], now[t].get("speedup_eager")) if t in now else fast(a["class"], a["speedup"])
                       for t, a in then.items()) / tasks if tasks else 0
        median = f"{statistics.median(ratios):.3f}" if ratios else "-"
        print(f"{name:<16} {tasks:>5} {len(now):>11} {fast_then:>11.1%} {fast_now:>10.1%} {len(flipped):>7} {median:>15}")
        for line in flipped:
            print(f"  flipped: {line}")
        for line in changed_class:
            print(f"  class changed: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
