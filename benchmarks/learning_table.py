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
tasks and gpu. Under "differences", each comparison the learning protocol names (docs/learning.md)
whose two models were given: the difference of fast_1 over the same held-out tasks and its 95%
interval from a paired bootstrap over tasks (10,000 resamples, a fixed seed, so a table is
reproducible).
"""
import argparse
import json
import math
import pathlib
import random
import sys

from learning_report import MODELS, print_table

KEYS = [key for key, _ in MODELS]
# The protocol's comparisons: (name, the model, the one it is set against).
COMPARISONS = [("rl_vs_sft", "rl", "sft"), ("rl_vs_sft_no_skills", "rl_no_skills", "sft_no_skills"),
               ("skills_in_sft", "sft", "sft_no_skills"), ("skills_in_rl", "rl", "rl_no_skills")]
RESAMPLES = 10_000


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


def fast_1_by_task(answers: dict) -> dict:
    """task -> 1 when its first answer is correct and faster than eager, else 0."""
    return {task: int(c == "correct" and s > 1.0) for task, (c, s, _) in answers.items()}


def paired_bootstrap(better: dict, base: dict, tasks: int, resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """fast_1 of better minus base over the same `tasks` held-out tasks (a task neither answered counts
    0 for both), with the 2.5th and 97.5th percentiles of that difference over resamples of the tasks
    drawn with replacement."""
    names = sorted(set(better) | set(base))
    diffs = [better.get(t, 0) - base.get(t, 0) for t in names] + [0] * (tasks - len(names))
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=tasks)) / tasks for _ in range(resamples))
    lo, hi = means[int(0.025 * (resamples - 1))], means[int(math.ceil(0.975 * (resamples - 1)))]
    return {"difference": sum(diffs) / tasks, "interval": [lo, hi], "resamples": resamples}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, required=True, help="held-out tasks (the rates' denominator)")
    p.add_argument("--gpu", required=True)
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("models", nargs="+", metavar="KEY=FILE")
    a = p.parse_args()
    if a.tasks < 1:
        sys.exit("--tasks must be at least 1")
    table, fast = {}, {}
    for spec in a.models:
        key, _, file = spec.partition("=")
        if key not in KEYS or not file:
            sys.exit(f"{spec}: expected KEY=FILE with KEY one of {', '.join(KEYS)}")
        answers = first_answers(pathlib.Path(file))
        table[key] = entry(answers, a.tasks, a.gpu)
        fast[key] = fast_1_by_task(answers)
    print_table(table)
    differences = {name: paired_bootstrap(fast[x], fast[y], a.tasks)
                   for name, x, y in COMPARISONS if x in fast and y in fast}
    for name, d in differences.items():
        lo, hi = d["interval"]
        print(f"{name}: fast_1 {100 * d['difference']:+.1f} points, 95% interval [{100 * lo:+.1f}, {100 * hi:+.1f}]")
    out = {k: table[k] for k in KEYS if k in table}
    if differences:
        out["differences"] = differences
    a.out.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
