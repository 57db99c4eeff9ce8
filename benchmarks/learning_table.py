#!/usr/bin/env python3
"""docs/learning.json's table from per-task results when the four models were not all benched in one
state (learning_report.py's case): each model's held-out results as a JSONL of bench-model's
attempts.jsonl or of `vinci eval --out` (learning_retime.sh's retime-NAME.jsonl). A held-out task
missing from a file counts as failed, so a retime of only the correct answers (CORRECT_ONLY=1) still
gives rates over every held-out task.

    learning_table.py --tasks N --gpu NAME OUT_JSON KEY=FILE...   (KEY: sft, sft_no_skills, rl, rl_no_skills)

Prints the Markdown table and writes the JSON: correct, fast_1, fast_1_5 (fractions of N),
mean_speedup and geomean_speedup (over the correct answers; null without one), launch_bound (correct
answers the judge flagged as timed on host launch work; null from attempts written before they
carried the flags),
tasks and gpu.
"""
import argparse
import json
import math
import pathlib
import sys

from learning_report import MODELS, print_table

KEYS = [key for key, _ in MODELS]


def first_answers(path: pathlib.Path) -> dict:
    """task -> (class, speedup over eager, launch_bound) of each task's first-turn answer; launch_bound
    is None in attempts written before bench-model carried the judge's flags."""
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            task = row["task"]
            if row.get("turn", 0) != 0 or task in out:
                continue
            speedup = row["speedup"] if "speedup" in row else row.get("speedup_eager")
            flags = row.get("flags", [] if "timing_check" in row else None)  # eval results omit an empty list
            bound = None if flags is None else "launch_bound" in flags
            out[task] = (row["class"], speedup or 0.0, bound)
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            sys.exit(f"{path}:{n}: not a bench-model attempt or eval result ({e})")
    return out


def entry(answers: dict, tasks: int, gpu: str) -> dict:
    if len(answers) > tasks:
        sys.exit(f"{len(answers)} tasks answered but --tasks is {tasks}")
    speedups = [s for c, s, _ in answers.values() if c == "correct" and s > 0]
    faster = lambda x: sum(1 for s in speedups if s > x) / tasks
    return {"correct": sum(1 for c, _, _ in answers.values() if c == "correct") / tasks, "fast_1": faster(1.0),
            "fast_1_5": faster(1.5), "mean_speedup": sum(speedups) / len(speedups) if speedups else None,
            "geomean_speedup": math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None,
            "launch_bound": None if any(b is None for c, _, b in answers.values() if c == "correct") else
            sum(1 for c, _, b in answers.values() if c == "correct" and b),
            "tasks": tasks, "gpu": gpu}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, required=True, help="held-out tasks (the rates' denominator)")
    p.add_argument("--gpu", required=True)
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("models", nargs="+", metavar="KEY=FILE")
    a = p.parse_args()
    if a.tasks < 1:
        sys.exit("--tasks must be at least 1")
    table = {}
    for spec in a.models:
        key, _, file = spec.partition("=")
        if key not in KEYS or not file:
            sys.exit(f"{spec}: expected KEY=FILE with KEY one of {', '.join(KEYS)}")
        table[key] = entry(first_answers(pathlib.Path(file)), a.tasks, a.gpu)
    print_table(table)
    a.out.write_text(json.dumps({k: table[k] for k in KEYS if k in table}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
