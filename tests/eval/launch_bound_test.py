"""The judge's launch_bound flag (python/vinci_worker/judge.py gpu_busy_share): the share of a median
timed call that the profiled call's kernels kept the GPU busy, with the threshold's both sides and
every busy time that must be ignored rather than trusted. Values worked by hand.

    python3 tests/eval/launch_bound_test.py REPO_ROOT
"""
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
from vinci_worker.judge import LAUNCH_BOUND_BUSY_SHARE, gpu_busy_share  # noqa: E402

failures = []


def check(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


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

for f in failures:
    print("FAILED:", f)
print(f"{'FAIL' if failures else 'ok'}: the launch_bound share")
sys.exit(1 if failures else 0)
