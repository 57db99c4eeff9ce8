#!/usr/bin/env python3
"""Compares each bench's verdicts with the same candidates timed again (benchmarks/learning_retime.sh):
per pair of measurements (the bench against the first timing again, and with REPEATS=2 the first
timing again against the second), the tasks in both, fast_1 in each over those tasks, the tasks whose
fast_1 verdict flipped, and the median ratio of the two speedups. Correctness does not depend on
timing, so a class that changed is listed too.

    learning_retime.py OUT_DIR   (bench-NAME-attempts.jsonl, retime-NAME.jsonl, retime-NAME.2.jsonl in it)
"""
import json
import pathlib
import statistics
import sys


def verdicts(path: pathlib.Path, speedup_key: str) -> dict:
    """task -> (class, speedup) of one measurement's JSONL; {} when it is missing."""
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {r["task"]: (r["class"], r.get(speedup_key) or 0.0) for r in rows}


def compare(label: str, first: dict, second: dict) -> None:
    fast = lambda v: v[0] == "correct" and v[1] > 1.0
    tasks = sorted(set(first) & set(second))
    flipped = [f"{t} {first[t][1]:.3f}x -> {second[t][1]:.3f}x" for t in tasks if fast(first[t]) != fast(second[t])]
    changed = [f"{t} {first[t][0]} -> {second[t][0]}" for t in tasks if first[t][0] != second[t][0]]
    ratios = [second[t][1] / first[t][1] for t in tasks
              if first[t][0] == second[t][0] == "correct" and first[t][1] and second[t][1]]
    both_correct = sum(first[t][0] == second[t][0] == "correct" for t in tasks)
    rate = lambda v: sum(fast(v[t]) for t in tasks) / len(tasks) if tasks else 0.0
    median = f"{statistics.median(ratios):.3f}" if ratios else "-"
    print(f"{label:<44} {len(tasks):>5} {both_correct:>7} {rate(first):>8.1%} {rate(second):>8.1%} {len(flipped):>7} "
          f"{median:>12}")
    for line in flipped:
        print(f"  flipped: {line}")
    for line in changed:
        print(f"  class changed: {line}")


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    print(f"{'measurements compared':<44} {'tasks':>5} {'correct':>7} {'fast_1 a':>8} {'fast_1 b':>8} {'flipped':>7} "
          f"{'median b/a':>12}")
    for attempts_path in sorted(out.glob("bench-*-attempts.jsonl")):
        name = attempts_path.name[len("bench-"):-len("-attempts.jsonl")]
        bench = verdicts(attempts_path, "speedup")
        again = verdicts(out / f"retime-{name}.jsonl", "speedup_eager")
        second = verdicts(out / f"retime-{name}.2.jsonl", "speedup_eager")
        compare(f"{name}: bench / timed again", bench, again)
        if second:
            compare(f"{name}: timed again / a second time", again, second)
    return 0


if __name__ == "__main__":
    sys.exit(main())
