"""The speedups a judge reports are against the reference timed beside the candidate, never against a
cached baseline alone (python/vinci_worker/judge.py, paired_baseline).

Red-team round 28 streamed memory in a second judge while the first timed 13_ReLU's baseline: the
cached eager time (the CPU-time clock counts memory stalls) rose up to 1.6x, and an own kernel honestly
at 0.86x scored 1.18x. Here the cached baseline handed to the judge is inflated a hundredfold, the
torch.compile one with it, so the outcome is certain rather than timed: the honest 13_ReLU solution's
speedup must be the paired reference's median over its own (exactly), that paired median must be the
reference's order of magnitude (within 5x of a baseline the same judge just timed), and the cached
compile times must be scaled down by the same factor as the eager ones.

The other way (red-team round 36: helper processes on a GPU slowed the paired reference, and a kernel
at 0.83x scored 3.48x): a cached baseline deflated a hundredfold holds the paired times to its level,
so the speedup is the cached median over the candidate's own, however slow the reference ran beside it.

    python3 tests/eval/paired_baseline_test.py REPO_ROOT SANDBOX_BINARY CACHE
"""
import os
import statistics
import sys
import tempfile

ROOT, SANDBOX, CACHE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures  # noqa: E402
from judge_process import JudgeProcess  # noqa: E402
TASK = os.path.join(ROOT, "tasks", "level1", "13_ReLU.py")
SOLUTION = os.path.join(ROOT, "tasks", "solutions", "cpu", "level1", "13_ReLU.py")
INFLATION = 100.0


def main() -> int:
    logs = tempfile.mkdtemp(prefix="paired-baseline-")
    judge = JudgeProcess("cpu", CACHE, SANDBOX)
    judge.ask({"op": "hello"})
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from vinci_runner.importer import static_report
    with open(SOLUTION) as f, open(TASK) as g:
        static, refused = static_report(f.read(), g.read(), {})
    check(not refused, f"the text rules refused the honest solution: {refused}")
    config = {"compile_baseline": False, "timing": {"trials": 10, "min_trials": 6, "budget_s": 30}}
    base = judge.ask({"op": "baseline", "path": TASK, "scale": 0.05, "config": config})
    check(base.get("ok") is True, f"the baseline failed: {base}")
    cached = statistics.median(base["eager_times"])
    inflated = dict(base, eager_times=[t * INFLATION for t in base["eager_times"]],
                    compile_times=[t * INFLATION for t in base["eager_times"]])
    reply = judge.evaluate(TASK, SOLUTION, config, os.path.join(logs, "run.log"), 0.05, inflated, static)
    deflated = dict(base, eager_times=[t / INFLATION for t in base["eager_times"]])
    held = judge.evaluate(TASK, SOLUTION, config, os.path.join(logs, "held.log"), 0.05, deflated, static)
    judge.close()
    check(held.get("class") == "correct", f"the honest solution against a deflated cache: {held.get('class')}/"
          f"{held.get('reason', '')}: {(held.get('message') or '')[:200]}")
    if held.get("class") == "correct":
        want = statistics.median(deflated["eager_times"]) / held["timing"]["median_ms"]
        check(abs(held["speedup_eager"] - want) <= 1e-9 * want,
              f"against a deflated cache, speedup_eager {held['speedup_eager']} is not cached/own = {want}")
    verdict = f"{reply.get('class')}/{reply.get('reason', '')}: {(reply.get('message') or '')[:200]}"
    check(reply.get("class") == "correct", f"the honest solution must stay correct: {verdict}")
    if failures:
        return 1
    paired, mine = reply["eager_paired"]["median_ms"], reply["timing"]["median_ms"]
    check(reply["eager_paired"]["trials"] >= 3, f"too few paired windows: {reply['eager_paired']}")
    check(abs(reply["speedup_eager"] - paired / mine) <= 1e-9 * paired / mine,
          f"speedup_eager {reply['speedup_eager']} is not paired/own = {paired}/{mine}")
    check(cached / 5 < paired < cached * 5,
          f"the paired reference ({paired:.4g} ms) is not the reference's time ({cached:.4g} ms cached, honestly)")
    # The compile times were the eager ones inflated alike: scaled by paired/inflated, they are the paired.
    check(abs(reply["speedup_compile"] - reply["speedup_eager"]) <= 1e-9 * reply["speedup_eager"],
          f"speedup_compile {reply['speedup_compile']} against speedup_eager {reply['speedup_eager']}")
    low, high = reply["speedup_eager_interval"]
    check(low <= reply["speedup_eager"] * 1.0001 and high >= reply["speedup_eager"] * 0.9999 and high < INFLATION / 5,
          f"the interval {[low, high]} is not around the paired speedup {reply['speedup_eager']}")
    if failures:
        return 1
    print(f"paired: {paired:.4g} ms beside the candidate, {cached:.4g} ms cached (handed over x{INFLATION:g}); "
          f"speedup {reply['speedup_eager']:.3g}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
