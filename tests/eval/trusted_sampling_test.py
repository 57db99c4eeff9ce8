"""The GPU's timed windows under the trusted sampler (python/vinci_worker/trusted_sampling.py).

Red-team round 38 left a gap: a candidate that told the sampler's coverage calls and the profiled call
apart ran its own kernel there and cuBLAS (dlsym) in the trials and the timed calls. Now a GPU host that
allows perf events samples windows like the timed ones (timed_windows.py), and samples in a GPU math
library's host code reject. Checked here without a GPU, against counts written by hand:
- vinci-cpu-sampler answers once for each set of excluded spans it is given;
- vinci-cpu-sampler --perf-only never falls back to ptrace stops (a GPU runner is stopped by signals),
  and the judge's probe of perf agrees with it;
- no library sample passes and records the count; GPU_LIBRARY_SAMPLES reject under forbid, naming the
  library, and warn under warn;
- a sampler that could not watch the runner falls back to the coverage calls, whose share decides as
  before (0.30 own rejects under forbid, no library seen passes) and says the timed calls went unsampled.

    python3 tests/eval/trusted_sampling_test.py REPO_ROOT SAMPLER_BINARY
"""
import json
import os
import subprocess
import sys

ROOT, SAMPLER = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from checks import check, finish  # noqa: E402
from vinci_worker.outcome import Outcome  # noqa: E402
from vinci_worker.trusted_sampling import TrustedSampling  # noqa: E402


class GpuJudge(TrustedSampling):
    """The mixin's GPU rules alone: the coverage calls answer a share set by the test."""

    def __init__(self, coverage: tuple):
        self.cuda = True
        self.sampler = SAMPLER
        self.coverage = coverage
        self.coverage_calls = 0

    def _host_coverage(self, loaded, task, cfg):
        self.coverage_calls += 1
        return self.coverage


def verdict(found: dict, policy: str, coverage=(None, "")) -> tuple[dict, Outcome | None, int]:
    judge = GpuJudge(coverage)
    reply = {"external": {}}
    try:
        judge._gpu_library_calls(found, None, None, {"torch_ops": policy, "min_coverage": 0.5}, reply)
    except Outcome as o:
        return reply, o, judge.coverage_calls
    return reply, None, judge.coverage_calls


def counts(library: int, **extra) -> dict:
    return dict({"own": 3, "library": library, "total": 400, "error": None, "library_names": {}}, **extra)


def main() -> int:
    sleeper = subprocess.Popen(["sleep", "10"])
    try:
        out = subprocess.run([SAMPLER, "--pid", str(sleeper.pid), "--ms", "50", "--hz", "20000", "--perf-only"],
                             capture_output=True, text=True, timeout=30).stdout.splitlines()
    finally:
        sleeper.kill()
        sleeper.wait()
    answer = json.loads(out[-1])
    check(out[0] == "attached", f"the sampler says it attached first: {out[:1]}")
    check(answer["lookup"] == "perf" and not answer["error"] or
          answer["lookup"] == "none" and "perf events refused" in answer["error"],
          f"--perf-only samples through perf or says perf is refused, never ptrace: {answer}")
    check(GpuJudge((None, ""))._perf_allowed() == (answer["lookup"] == "perf"),
          "the judge's probe agrees with the sampler on whether perf events are allowed")

    # The judge tallies its draws kinds apart from one sampling: a set of spans a kind, "--" between
    # them, one answer a set in their order (tests/eval/cpu_sampler_test.cpp checks the tallies).
    sleeper = subprocess.Popen(["sleep", "10"])
    try:
        sampler = subprocess.Popen([SAMPLER, "--pid", str(sleeper.pid), "--ms", "50", "--exclusions-on-stdin"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lines = sampler.communicate("1 2\n--\n3 4\n5 6\n--\n", timeout=30)[0].splitlines()
    finally:
        sleeper.kill()
        sleeper.wait()
    answers = [json.loads(line) for line in lines[1:]]
    check(len(answers) == 3 and all(a["lookup"] == answers[0]["lookup"] for a in answers),
          f"three sets of spans, three answers of one sampling: {lines}")

    reply, outcome, asked = verdict(counts(0), "forbid")
    check(outcome is None and reply["external"]["gpu_library_samples"] == 0 and asked == 0,
          f"no sample in a math library passes, counted, without coverage calls: {reply}, {outcome}")
    reply, outcome, _ = verdict(counts(1, library_names={"libcublasLt.so.13": 1}), "forbid")
    check(outcome is None, "one sample is under the bound of 2")
    names = {"libcublasLt.so.13": 5, "libcublas.so.13": 2}
    reply, outcome, _ = verdict(counts(7, library_names=names), "forbid")
    check(outcome is not None and outcome.reply["class"] == "rejected" and
          outcome.reply["reason"] == "library_compute" and
          "libcublasLt.so.13, libcublas.so.13" in outcome.reply["message"] and "7 samples" in outcome.reply["message"],
          f"7 samples in cuBLAS reject under forbid, naming the libraries busiest first: {outcome and outcome.reply}")
    reply, outcome, _ = verdict(counts(7, library_names=names), "warn")
    check(outcome is None and any("7 samples" in w for w in reply.get("warnings", [])),
          f"... and warn under warn: {reply}")

    unsampled = counts(0, error="perf events refused on process 1")
    reply, outcome, asked = verdict(unsampled, "forbid", coverage=(0.3, ""))
    check(asked == 1 and outcome is not None and outcome.reply["reason"] == "library_compute" and
          "30.0%" in outcome.reply["message"],
          f"an unsampled runner falls back to the coverage calls, whose 30% own share rejects: "
          f"{asked}, {outcome and outcome.reply}")
    reply, outcome, asked = verdict(unsampled, "forbid", coverage=(None, ""))
    check(asked == 1 and outcome is None and reply["external"]["gpu_library_samples"] is None and
          any("unsampled (perf events refused" in w for w in reply.get("warnings", [])),
          f"... where no library ran it passes, saying the timed calls went unsampled: {reply}")
    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
