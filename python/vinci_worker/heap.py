"""The judge's own heap: freed memory kept for the next call's tensors instead of returned.

glibc maps every block above its mmap threshold (at most 32 MiB) afresh and unmaps it when freed, so
each of the judge's large tensors (inputs drawn again, the fp32 and fp64 references, the comparison's
temporaries) faults in every page again. At the plain trials' grown shape (shapes.GROWTH) that was
most of their time: 20 ReLU, double and fp64-ReLU passes over 13 million elements took 2.4 s mapped
afresh and 0.45 s reused on the 2-core CI machine. The judge process is trusted and runs nothing of a
candidate's, so what it keeps is only its own working set; the runners' heaps are set in
sandbox.SandboxLauncher._environment, for the candidate and the reference alike.
"""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1  # malloc.h
M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    """Serves every allocation from the heap and never trims it. False where the C library has no
    mallopt (not glibc), where nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
