"""benchmarks/learning_table.py on hand-made result files: rates over every held-out task (a task
missing from a file counts as failed), speedups over the correct answers only, the first turn of a
task only, the judge's launch_bound flag counted from eval results and attempts and unknown (null) in
attempts written before they carried it, and bad input refused with the file and line. Expected
values are worked by hand.

    python3 tests/benchmarks/learning_table_test.py REPO_ROOT
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile

script = pathlib.Path(sys.argv[1]) / "benchmarks" / "learning_table.py"
failures = []


def check(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


def write(path: pathlib.Path, rows: list) -> pathlib.Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def table(out: pathlib.Path, *models: str, tasks: int = 5) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script, "--tasks", str(tasks), "--gpu", "G", out, *models],
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    d = pathlib.Path(d)
    # bench-model's attempts: 3 of 5 tasks answered, 2 correct (4x and 1.25x), a later turn ignored.
    attempts = write(d / "attempts.jsonl", [
        {"task": "l2/a", "turn": 0, "class": "correct", "speedup": 4.0},
        {"task": "l2/b", "turn": 0, "class": "correct", "speedup": 1.25},
        {"task": "l2/c", "turn": 0, "class": "incorrect", "speedup": 0.0},
        {"task": "l2/c", "turn": 1, "class": "correct", "speedup": 9.0}])
    # vinci eval results (a retime of the correct ones): 0.5x, 2x and 8x, one flagged launch-bound.
    results = write(d / "results.jsonl", [
        {"task": "l2/a", "class": "correct", "speedup_eager": 0.5, "timing_check": {}, "flags": ["launch_bound"]},
        {"task": "l2/b", "class": "correct", "speedup_eager": 2.0, "timing_check": {}},
        {"task": "l2/d", "class": "correct", "speedup_eager": 8.0, "timing_check": {}}])
    out = d / "learning.json"
    run = table(out, f"rl={attempts}", f"sft={results}")
    check(run.returncode == 0, f"a good table fails: {run.stderr}")
    if run.returncode == 0:
        got = json.loads(out.read_text())
        check(list(got) == ["sft", "rl"], f"keys in the issue's order: {list(got)}")
        rl, sft = got["rl"], got["sft"]
        check(rl["correct"] == 2 / 5 and rl["fast_1"] == 2 / 5 and rl["fast_1_5"] == 1 / 5,
              f"attempts' rates over the 5 tasks: {rl}")
        check(math.isclose(rl["mean_speedup"], 2.625) and math.isclose(rl["geomean_speedup"], math.sqrt(5.0)),
              f"attempts' speedups: {rl}")
        check(rl["launch_bound"] is None, "old attempts carry no flags, so launch_bound is unknown")
        check(sft["correct"] == 3 / 5 and sft["fast_1"] == 2 / 5 and sft["fast_1_5"] == 2 / 5,
              f"results' rates: {sft}")
        check(math.isclose(sft["mean_speedup"], 3.5) and math.isclose(sft["geomean_speedup"], 2.0),
              f"results' speedups: {sft}")
        check(sft["launch_bound"] == 1 and sft["tasks"] == 5 and sft["gpu"] == "G", f"results' flag and fields: {sft}")
        check("| RL, skills injected | 5 | 40.0% | 40.0% | 20.0% | 2.62x | 2.24x | - |" in run.stdout,
              f"the Markdown row: {run.stdout}")

    # Attempts that carry the judge's flags: one of the 2 correct first answers is launch-bound; the
    # flag of a wrong answer or of a later turn does not count.
    flagged = write(d / "flagged.jsonl", [
        {"task": "l2/a", "turn": 0, "class": "correct", "speedup": 4.0, "flags": []},
        {"task": "l2/b", "turn": 0, "class": "correct", "speedup": 1.25, "flags": ["launch_bound"]},
        {"task": "l2/c", "turn": 0, "class": "incorrect", "speedup": 0.0, "flags": ["launch_bound"]},
        {"task": "l2/d", "turn": 0, "class": None, "speedup": 0.0, "flags": None},
        {"task": "l2/e", "turn": 1, "class": "correct", "speedup": 9.0, "flags": ["launch_bound"]}])
    run = table(out, f"rl={flagged}")
    check(run.returncode == 0, f"flagged attempts fail: {run.stderr}")
    if run.returncode == 0:
        check(json.loads(out.read_text())["rl"]["launch_bound"] == 1, f"flagged attempts: {out.read_text()}")
        check("| RL, skills injected | 5 | 40.0% | 40.0% | 20.0% | 2.62x | 2.24x | 1 |" in run.stdout,
              f"the flagged Markdown row: {run.stdout}")

    before = out.read_text() if out.exists() else ""
    bad = write(d / "bad.jsonl", [{"task": "l2/a", "class": "correct", "speedup": 2.0}, {"class": "correct"}])
    run = table(out, f"rl={bad}")
    check(run.returncode != 0 and f"{bad}:2:" in run.stderr, f"a row without a task names its line: {run.stderr}")
    run = table(out, f"fast={attempts}")
    check(run.returncode != 0 and "KEY one of" in run.stderr, f"an unknown key is refused: {run.stderr}")
    run = table(out, f"rl={attempts}", tasks=2)
    check(run.returncode != 0 and "--tasks is 2" in run.stderr, f"more tasks answered than held out: {run.stderr}")
    check(out.read_text() == before, "a refused table leaves the last JSON as it was")

for f in failures:
    print("FAIL:", f)
print(f"{'ok' if not failures else f'{len(failures)} failures'}")
sys.exit(1 if failures else 0)
