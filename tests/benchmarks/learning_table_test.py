"""benchmarks/learning_table.py on hand-made result files: rates over every held-out task (a task
missing from a file counts as failed), speedups over the correct answers only, the first turn of a
task only, the judge's launch_bound flag counted from eval results and attempts and unknown (null) in
attempts written before they carried it, bad input refused with the file and line, and the paired
bootstrap of fast_1 differences over tasks. Expected values are worked by hand.

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
        check(list(got) == ["sft", "rl", "differences"], f"keys in the issue's order, then the differences: {list(got)}")
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

    # The paired bootstrap over 5 tasks. SFT (results) is faster than eager on l2/b and l2/d, RL
    # (attempts) on l2/a and l2/b: per task RL - SFT is +1 (a), 0 (b), 0 (c), -1 (d), 0 (e), so the
    # difference is 0; the same answers set against themselves give exactly 0 with interval [0, 0].
    run = table(out, f"rl={attempts}", f"sft={results}", f"rl_no_skills={attempts}", f"sft_no_skills={attempts}")
    check(run.returncode == 0, f"four models fail: {run.stderr}")
    if run.returncode == 0:
        diffs = json.loads(out.read_text())["differences"]
        check(sorted(diffs) == ["rl_vs_sft", "rl_vs_sft_no_skills", "skills_in_rl", "skills_in_sft"],
              f"the protocol's four comparisons: {sorted(diffs)}")
        check(diffs["rl_vs_sft"]["difference"] == 0.0, f"+1 and -1 over 5 tasks: {diffs['rl_vs_sft']}")
        lo, hi = diffs["rl_vs_sft"]["interval"]
        check(lo < 0 < hi, f"a tie with one task each way is uncertain both ways: {lo}, {hi}")
        check(diffs["rl_vs_sft_no_skills"] == {"difference": 0.0, "interval": [0.0, 0.0], "resamples": 10000},
              f"a model against the same answers: {diffs['rl_vs_sft_no_skills']}")
        check("rl_vs_sft: fast_1 +0.0 points" in run.stdout, f"the printed line: {run.stdout}")
    # One task better of 5, the rest tied: the resampled count of that task is Binomial(5, 1/5), so the
    # difference is k/5 with P(k = 0) = 0.328 (the 2.5th percentile is 0) and P(k <= 2) = 0.942,
    # P(k <= 3) = 0.993 (the 97.5th is 3/5).
    one = write(d / "one.jsonl", [{"task": "l2/a", "turn": 0, "class": "correct", "speedup": 2.0}])
    none = write(d / "none.jsonl", [{"task": "l2/a", "turn": 0, "class": "incorrect", "speedup": 0.0}])
    run = table(out, f"rl={one}", f"sft={none}")
    if run.returncode == 0:
        got = json.loads(out.read_text())["differences"]["rl_vs_sft"]
        check(got["difference"] == 0.2 and got["interval"] == [0.0, 0.6], f"one task of five better: {got}")
    # Every task better: the difference and both ends are 1.
    allfast = write(d / "all.jsonl", [{"task": f"l2/{t}", "turn": 0, "class": "correct", "speedup": 3.0} for t in "abcde"])
    run = table(out, f"rl={allfast}", f"sft={none}")
    if run.returncode == 0:
        got = json.loads(out.read_text())["differences"]["rl_vs_sft"]
        check(got["difference"] == 1.0 and got["interval"] == [1.0, 1.0], f"every task better: {got}")
    run = table(out, f"rl={attempts}")
    check(run.returncode == 0 and "differences" not in json.loads(out.read_text()), "one model alone: no differences")

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
