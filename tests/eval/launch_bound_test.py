"""The judge's launch_bound flag (python/vinci_worker/timed_windows.py gpu_busy_share): the share of a median
timed call that the profiled call's kernels kept the GPU busy, with the threshold's both sides and
every busy time that must be ignored rather than trusted; and the rejection of a profiled call busier
than a timed call (require_timed_work_as_profiled, red-team round 13); and the watched calls held to the
timed ones by the judge's own clock (require_watched_calls_as_timed, red-team round 38), through the
judge's own step over scripted windows. Values worked by hand.

    python3 tests/eval/launch_bound_test.py REPO_ROOT
"""
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
from vinci_worker.outcome import Outcome  # noqa: E402
from vinci_worker.timed_windows import (LAUNCH_BOUND_BUSY_SHARE, PROFILED_BUSY_MARGIN,  # noqa: E402
                                        PROFILED_BUSY_SLACK_MS, WATCHED_MARGIN, WATCHED_SLACK_MS, Timing,
                                        gpu_busy_share, require_timed_work_as_profiled,
                                        require_watched_calls_as_timed)
from checks import check, finish  # noqa: E402

# bench (d)'s 18_ShiftScaleTanh on an H200: 0.021 ms of kernels in a 0.107 ms call -> 0.196, launch-bound
share = gpu_busy_share(0.021, 0.107)
check(abs(share - 0.021 / 0.107) < 1e-12 and share < LAUNCH_BOUND_BUSY_SHARE, f"0.021 of 0.107 ms: {share}")
# the same kernel at 64 times the elements: 1.10 ms of kernels in a 1.167 ms call -> 0.943, not launch-bound
share = gpu_busy_share(1.10, 1.167)
check(share > LAUNCH_BOUND_BUSY_SHARE, f"1.10 of 1.167 ms: {share}")
check(LAUNCH_BOUND_BUSY_SHARE == 0.5, f"the threshold is half the window: {LAUNCH_BOUND_BUSY_SHARE}")
check(gpu_busy_share(0.5, 1.0) == 0.5, "exactly half")
check(gpu_busy_share(3.0, 1.0) == 1.0, "busy beyond the window (concurrent kernels) is capped at 1")
check(gpu_busy_share(0, 1.0) == 0.0, "no kernel time at all")
for busy, median, why in [(None, 1.0, "no profile"), (float("nan"), 1.0, "NaN"), (float("inf"), 1.0, "inf"),
                          (-0.1, 1.0, "negative"), (True, 1.0, "a bool"), ("0.5", 1.0, "a string"),
                          (0.5, 0.0, "a zero median"), (0.5, float("nan"), "a NaN median")]:
    check(gpu_busy_share(busy, median) is None, f"{why} is ignored: {gpu_busy_share(busy, median)}")



def verdict(busy, median_ms):
    """The rejection's reason, or None, and the ratio the result records."""
    timed = {"timing": {"median_ms": median_ms}, "external": {}}
    try:
        require_timed_work_as_profiled({"gpu_busy_ms": busy}, timed)
    except Outcome as o:
        return o.reply["reason"], timed["external"].get("gpu_busy_ratio")
    return None, timed["external"].get("gpu_busy_ratio")


check(PROFILED_BUSY_MARGIN == 1.25 and PROFILED_BUSY_SLACK_MS == 0.02, "the bound is 1.25x the timed call + 0.02 ms")
# Round 13's c_cublas_when_unwatched on an H200: its own kernel 6.10 ms under the profiler, 3.44 ms a timed call.
check(verdict(6.10, 3.44)[0] == "watched_call_slower", f"6.10 ms profiled in 3.44 ms timed calls: {verdict(6.10, 3.44)}")
reason, ratio = verdict(1.10, 1.167)
check(reason is None and abs(ratio - 1.10 / 1.167) < 1e-12, f"an honest 1.10 of 1.167 ms passes, ratio kept: {reason} {ratio}")
# The edge: 1.25 * 1.0 + 0.02 = 1.27 ms.
check(verdict(1.27, 1.0)[0] is None, "1.27 ms of kernels in a 1.0 ms timed call is at the bound, and passes")
check(verdict(1.271, 1.0)[0] == "watched_call_slower", "1.271 ms of kernels in a 1.0 ms timed call is over it")
check(verdict(0.03, 0.008)[0] is None, "a tiny call: 0.03 ms of kernels under 1.25 * 0.008 + 0.02 ms passes")
for busy in (None, float("nan"), -1.0, True, "9"):
    check(verdict(busy, 1.0) == (None, None), f"a busy time of {busy!r} decides nothing and is not recorded")



def watched(watched_ms, reference_watched_ms, median_ms, reference_median_ms):
    external = {}
    try:
        require_watched_calls_as_timed(watched_ms, reference_watched_ms, median_ms, reference_median_ms, external)
    except Outcome as o:
        return o.reply["reason"], external
    return None, external


check(WATCHED_MARGIN == 2.0 and WATCHED_SLACK_MS == 2.0, "the bound: 2x (median + the reference's window cost) + 2 ms")
# Round 38's naive SGEMM on an H200: its fastest trial 29.87 ms, 3.713 ms a timed call (cuBLAS), the
# reference's watched window 2.498 ms over its median. Allowed: 2 * (3.713 + 2.498) + 2 = 14.422 ms.
reason, ext = watched(29.87, 5.898, 3.713, 3.4)
check(reason == "watched_call_slower" and abs(ext["watched_allowed_ms"] - 14.422) < 1e-9,
      f"round 38's 29.87 ms trial beside 3.713 ms timed calls: {reason} {ext}")
# The honest 8_MatmulRowSum on the same H200: 4.895 ms beside a 0.6475 ms median, the reference's cost
# 1.872 ms. Allowed: 2 * (0.6475 + 1.872) + 2 = 7.039 ms; it passes, both recorded.
reason, ext = watched(4.895, 2.872, 0.6475, 1.0)
check(reason is None and ext["watched_ms"] == 4.895 and abs(ext["watched_allowed_ms"] - 7.039) < 1e-9,
      f"the honest 8_MatmulRowSum passes: {reason} {ext}")
check(set(ext) == {"watched_ms", "watched_allowed_ms"}, f"only what the wire carries is recorded: {ext}")
# The edge: 2 * (1.0 + (0.7 - 0.2)) + 2 = 5.0 ms.
check(watched(5.0, 0.7, 1.0, 0.2)[0] is None, "a trial at the bound passes")
check(watched(5.001, 0.7, 1.0, 0.2)[0] == "watched_call_slower", "a trial over it is rejected")
# A reference whose watched window was faster than its median (a quiet moment) gives no negative credit:
# 2 * (1.0 + 0) + 2 = 4.0 ms.
check(watched(4.0, 0.1, 1.0, 0.2)[0] is None and watched(4.01, 0.1, 1.0, 0.2)[0] == "watched_call_slower",
      "no negative window cost")



class ScriptedTiming(Timing):
    """Timing's _hold_watched_calls over scripted windows: each of the reference's watched windows takes
    the next of reference_ms, and records what it was asked."""

    def __init__(self, reference_ms):
        self.reference_ms, self.asked = list(reference_ms), []

    def _fresh(self, r, kind):
        return [(7, kind)] * r

    def _window(self, loaded, task, cfg, calls, label, monitor=False, profile=False):
        self.asked.append((loaded, len(calls), monitor, profile))
        return {}, self.reference_ms.pop(0), [[]]


def hold(trials, reference_ms, median_ms=3.713, reference_median_ms=3.4):
    judge = ScriptedTiming(reference_ms)
    timed = {"timing": {"median_ms": median_ms}, "eager_paired": {"median_ms": reference_median_ms}, "external": {}}
    check_reply = {"watched_ms": trials}
    paired = "the reference's runner"
    task = type("Task", (), {"timed_kind": "signed"})()
    try:
        judge._hold_watched_calls(check_reply, timed, paired, task, {})
        reason = None
    except Outcome as o:
        reason = o.reply["reason"]
    return reason, timed["external"], judge.asked, check_reply


# Round 38's trials (the first with cuBLAS's start in it) against the reference's three watched windows:
# the fastest of each counts, 29.87 against 2 * (3.713 + (5.898 - 3.4)) + 2 = 14.422 ms.
reason, ext, asked, left = hold([41.2, 29.87, 30.5], [6.4, 5.898, 6.1])
check(reason == "watched_call_slower" and ext["watched_ms"] == 29.87 and abs(ext["watched_allowed_ms"] - 14.422) < 1e-9,
      f"the fastest trial against the fastest reference window: {reason} {ext}")
check(len(asked) == 3 and all(a == ("the reference's runner", 1, True, False) for a in asked),
      f"three one-call windows of the reference's runner, monitored, not profiled: {asked}")
check("watched_ms" not in left, "the trials' times are taken out of the check's reply")
reason, ext, _, _ = hold([4.1, 3.95], [6.4, 5.898, 6.1])
check(reason is None and ext["watched_ms"] == 3.95, f"an honest kernel's trials pass: {reason} {ext}")
reason, ext, asked, _ = hold([], [6.4])
check(reason is None and ext == {} and asked == [], "no trial: nothing held, no reference window run")

sys.exit(finish("ok: the launch_bound share"))
