"""On a CPU host without a freezer cgroup the trusted sampler watches a phase of coverage calls, not the
timed windows; there, as over the timed windows, a share of own code left unmeasured never passes
under --torch-ops forbid (python/vinci_worker/judge.py, _check).

The host's freezer is turned off for the judge's sandboxes (VINCI_SANDBOX_FREEZER=off, the path a host
without one takes). The honest 13_ReLU solution must stay correct with its coverage measured. A copy
of it that sleeps 300 ms in every call (the coverage phase's 4 s of wall time then hold about 16 calls,
whose CPU time, which the sampler weighs, gives far under the 100 samples in compiled code a share is
measured from) was scored correct with a note before; it must be rejected as library_compute, its
share unmeasured. The copy is made here from the solution's text, so that it cannot drift from it.

    python3 tests/eval/unmeasured_coverage_test.py REPO_ROOT SANDBOX_BINARY CACHE
"""
import os
import sys
import tempfile

ROOT, SANDBOX, CACHE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures, finish  # noqa: E402
from judge_process import JudgeProcess  # noqa: E402
TASK = os.path.join(ROOT, "tasks", "level1", "13_ReLU.py")
SOLUTION = os.path.join(ROOT, "tasks", "solutions", "cpu", "level1", "13_ReLU.py")
LOOP = "  for (int64_t i = 0; i < n; ++i)"


def asleep(source: str) -> str:
    check(LOOP in source and "#include <torch/extension.h>" in source,
          f"{SOLUTION} no longer has the loop this test puts a sleep before")
    return (source.replace("#include <torch/extension.h>", "#include <torch/extension.h>\n#include <unistd.h>", 1)
                  .replace(LOOP, "  usleep(300000);\n" + LOOP, 1)
                  .replace('name="cpu_level1_13_relu"', 'name="cpu_level1_13_relu_asleep"', 1))


def main() -> int:
    work = tempfile.mkdtemp(prefix="unmeasured-coverage-")
    with open(SOLUTION) as f:
        honest = f.read()
    sleepy = os.path.join(work, "13_ReLU_asleep.py")
    with open(sleepy, "w") as f:
        f.write(asleep(honest))
    if failures:
        return 1
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from vinci_runner.importer import static_report
    judge = JudgeProcess("cpu", CACHE, SANDBOX, env={"VINCI_SANDBOX_FREEZER": "off"})
    hello = judge.ask({"op": "hello"})
    check("no freezer cgroup" in str(hello), f"the judge's sandbox still has a freezer cgroup: {hello}")
    config = {"compile_baseline": False, "timing": {"trials": 10, "min_trials": 5, "budget_s": 30}}
    base = judge.ask({"op": "baseline", "path": TASK, "scale": 0.05, "config": config})
    check(base.get("ok") is True, f"the baseline failed: {base}")
    replies = {}
    with open(TASK) as g:
        task_text = g.read()
    for name, path in (("honest", SOLUTION), ("asleep", sleepy)):
        with open(path) as f:
            static, refused = static_report(f.read(), task_text, {})
        check(not refused, f"the text rules refused the {name} copy: {refused}")
        replies[name] = judge.evaluate(TASK, path, config, os.path.join(work, f"{name}.log"), 0.05, base, static)
    judge.close()

    def verdict(r: dict) -> str:
        return f"{r.get('class')}/{r.get('reason', '')}: {(r.get('message') or '')[:300]}"
    honest_reply, sleepy_reply = replies["honest"], replies["asleep"]
    check(honest_reply.get("class") == "correct", f"the honest solution must stay correct: {verdict(honest_reply)}")
    check(isinstance(honest_reply.get("coverage"), float) and honest_reply["coverage"] > 0.5,
          f"the honest solution's coverage phase measured no share: {honest_reply.get('coverage')}")
    check(sleepy_reply.get("class") == "rejected" and sleepy_reply.get("reason") == "library_compute"
          and "unmeasured" in (sleepy_reply.get("message") or ""),
          f"a share left unmeasured passed under forbid: {verdict(sleepy_reply)}")
    return finish(f"honest: correct, coverage {honest_reply['coverage']:.2f}; asleep: {verdict(sleepy_reply)[:160]}")


if __name__ == "__main__":
    sys.exit(main())
