"""A trusted sampler that never answers makes no candidate pass unmeasured (python/vinci_worker/judge.py,
_unanswered).

Red-team round 20 made the sampler's attach outlast its limit (processes holding 65,000 mappings with
long paths, all of which it reads before it says "attached"), and the library share went unmeasured,
which passed: MKL doing a whole matmul was correct at 1.0x. Here the judge gets a sampler that never
attaches (a stand-in beside the real launcher, as the judge finds vinci-cpu-sampler), so the failure is
certain rather than timed: under --torch-ops forbid the honest 13_ReLU solution must be rejected as
library_compute saying why, and under warn it stays correct with the note.

    python3 tests/eval/sampler_unanswered_test.py REPO_ROOT SANDBOX_BINARY CACHE
"""
import os
import sys
import tempfile

ROOT, SANDBOX, CACHE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
from judge_process import JudgeProcess  # noqa: E402
TASK = os.path.join(ROOT, "tasks", "level1", "13_ReLU.py")
SOLUTION = os.path.join(ROOT, "tasks", "solutions", "cpu", "level1", "13_ReLU.py")


def main() -> int:
    tools = tempfile.mkdtemp(prefix="sampler-unanswered-")
    for name in ("vinci-sandbox", "vinci-as-guard"):
        os.symlink(os.path.join(os.path.dirname(os.path.abspath(SANDBOX)), name), os.path.join(tools, name))
    mute = os.path.join(tools, "vinci-cpu-sampler")
    with open(mute, "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")  # never says "attached", never answers
    os.chmod(mute, 0o755)
    judge = JudgeProcess("cpu", CACHE, os.path.join(tools, "vinci-sandbox"))
    judge.ask({"op": "hello"})
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from vinci_runner.importer import static_report
    with open(SOLUTION) as f, open(TASK) as g:
        static, refused = static_report(f.read(), g.read(), {})
    check(not refused, f"the text rules refused the honest solution: {refused}")
    for policy in ("forbid", "warn"):
        config = {"compile_baseline": False, "torch_ops": policy,
                  "timing": {"trials": 5, "min_trials": 5, "budget_s": 5}}
        base = judge.ask({"op": "baseline", "path": TASK, "scale": 0.05, "config": config})
        reply = judge.evaluate(TASK, SOLUTION, config, os.path.join(tools, f"{policy}.log"), 0.05, base, static)
        verdict = f"{reply.get('class')}/{reply.get('reason', '')}: {(reply.get('message') or '')[:200]}"
        if policy == "forbid":
            check((reply.get("class"), reply.get("reason")) == ("rejected", "library_compute"),
                  f"under forbid a sampler that never answers must reject: {verdict}")
            check("could not watch" in (reply.get("message") or ""),
                  f"the rejection must say the sampler could not watch: {verdict}")
        else:
            check(reply.get("class") == "correct", f"under warn the honest solution stays correct: {verdict}")
    judge.close()
    return finish("an unanswered sampler: rejected under forbid, a note under warn")


if __name__ == "__main__":
    sys.exit(main())
