#!/usr/bin/env python3
"""`vinci sft-data --resume` (ctest: Cli.SftDataResume): a run interrupted after its first task, with
a torn episode line and the records of a task whose episode never landed, goes on to write exactly
what one uninterrupted run writes, that one with its 3 tasks run at once and the parts one at a
time (the files are in task order whichever thread finishes first); a run into an existing folder without --resume, and --resume of
a folder holding no run, are setup errors (exit 4) that name the folder. On the CPU the teacher's
Triton kernels do not run, so the records are the selection conversations, which do not depend on
evaluation: the comparison is exact.

    sft_data_test.py VINCI
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402

VINCI = sys.argv[1]


def sft_data(cur, out, *extra, env):
    return subprocess.run([VINCI, "sft-data", "--curriculum", str(cur), "--out", str(out), "--device", "cpu",
                           "--scale", "0.05", "--no-compile-baseline", "--trials", "3", "--turns", "1",
                           "--schemes", "1", *extra], capture_output=True, text=True, timeout=600, env=env)


def tasks_of(folder):
    return [json.loads(line)["task"] for line in (folder / "episodes.jsonl").read_text().splitlines()]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        env = {**os.environ, "VINCI_CACHE": str(work / "cache")}
        subprocess.run([VINCI, "curriculum", "--out", str(work / "cur"), "--elementwise", "3", "--rowwise", "3",
                        "--rows", "64", "--cols", "128", "--heldout-share", "0"], check=True, capture_output=True)
        whole, parts = work / "whole", work / "parts"
        p = sft_data(work / "cur", whole, "--max-tasks", "3", "--parallel-tasks", "3", env=env)
        check(p.returncode == 0, f"the whole run: exit {p.returncode}: {p.stderr[-800:]}")
        p = sft_data(work / "cur", parts, "--max-tasks", "1", "--parallel-tasks", "1", env=env)
        check(p.returncode == 0 and len(tasks_of(parts)) == 1, f"the first part: exit {p.returncode}: {p.stderr[-800:]}")
        if failures:
            return 1
        # What a kill leaves: the second task's records appended, its episode line torn mid-write.
        second = json.loads((whole / "sft.jsonl").read_text().splitlines()[1])
        check(second["meta"]["task"] == tasks_of(whole)[1], "the whole run's second record is its second task's")
        with open(parts / "sft.jsonl", "a") as f:
            f.write(json.dumps(second) + "\n")
        with open(parts / "episodes.jsonl", "a") as f:
            f.write('{"task": "' + tasks_of(whole)[1] + '", "calls": [')

        p = sft_data(work / "cur", parts, "--max-tasks", "3", "--resume", env=env)
        check(p.returncode == 0, f"the resumed run: exit {p.returncode}: {p.stderr[-800:]}")
        check("resuming: 1 of 3 tasks were done" in p.stderr, f"the resumed run says what it kept: {p.stderr[-800:]}")
        check(tasks_of(parts) == tasks_of(whole), f"every task once, in order: {tasks_of(parts)} vs {tasks_of(whole)}")
        check((parts / "sft.jsonl").read_text() == (whole / "sft.jsonl").read_text(),
              "the resumed run's sft.jsonl is the whole run's, byte for byte")

        p = sft_data(work / "cur", whole, "--max-tasks", "3", env=env)
        check(p.returncode == 4 and str(whole) in p.stderr and "--resume" in p.stderr,
              f"an existing --out without --resume: exit {p.returncode}: {p.stderr[-400:]}")
        empty = work / "empty"
        empty.mkdir()
        p = sft_data(work / "cur", empty, "--resume", env=env)
        check(p.returncode == 4 and str(empty) in p.stderr,
              f"--resume of a folder without a run: exit {p.returncode}: {p.stderr[-400:]}")
        shutil.rmtree(work / "cache", ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
