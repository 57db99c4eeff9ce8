"""The floating-point environment a monitored call must leave as it found it
(python/vinci_runner/monitors.py: fp_environment, among the precision flags): the rounding direction
and flushed subnormals are seen in this thread and in torch's intra-op threads, each change named, and
the environment as it was reads back as it was (red-team round 52: a ReLU that left rounding upward and
flush-to-zero on was `correct`). The changes are made as a kernel makes them: fesetround from libm and
torch's own flush-denormal switch (MXCSR's FTZ and DAZ).

    python3 tests/eval/fp_environment_test.py REPO_ROOT
"""
import ctypes
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")

import torch  # noqa: E402

from checks import check, finish  # noqa: E402
from vinci_runner import monitors  # noqa: E402

FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO = 0x000, 0x400, 0x800, 0xC00  # x86-64 glibc


def main() -> int:
    libm = ctypes.CDLL("libm.so.6")
    torch.set_num_threads(4)
    clean = monitors.fp_environment(pool=True)
    check({k: v for k, v in clean.items() if k != "fp.x87"} ==
          {"fp.rounding": "nearest", "fp.subnormals": "kept", "fp.intra_op_threads": "nearest, subnormals kept"},
          f"the environment as a process starts: {clean}")
    check(clean["fp.x87"].startswith("6.66666666666666666"), f"long double's 2/3 at the x87's 64 bits: {clean['fp.x87']}")
    check(monitors.fp_environment() == {k: v for k, v in clean.items() if k != "fp.intra_op_threads"},
          "without pool, the calling thread alone")
    for mode, name in ((FE_UPWARD, "upward"), (FE_DOWNWARD, "downward"), (FE_TOWARDZERO, "toward zero")):
        libm.fesetround(mode)
        seen = monitors.fp_environment(pool=True)
        libm.fesetround(FE_TONEAREST)
        check(seen["fp.rounding"] != "nearest", f"rounding {name} is seen in the calling thread: {seen}")
    check(monitors.fp_environment(pool=True) == clean, "rounding to nearest again reads as it was")
    torch.set_flush_denormal(True)
    seen = monitors.fp_environment(pool=True)
    torch.set_flush_denormal(False)
    check(seen["fp.subnormals"] != "kept", f"flushed subnormals are seen in the calling thread: {seen}")
    check(seen["fp.intra_op_threads"] != clean["fp.intra_op_threads"], f"and in the intra-op threads: {seen}")
    snapshot = monitors.PatchSnapshot(pool=True)
    libm.fesetround(FE_UPWARD)
    changed = snapshot.flag_changes()
    libm.fesetround(FE_TONEAREST)
    check(any(c.startswith("fp.rounding: nearest -> ") for c in changed), f"a snapshot names the change: {changed}")
    check(snapshot.flag_changes() == [], "and nothing once it is undone")
    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
