"""How one call is timed inside a runner: an L2 flush, then CUDA events around the call on the
current stream (KernelBench's method), or the monotonic clock on the CPU.

The figure is the runner's claim. It counts only where the trusted side's wall clock of the same
call, minus the overhead a trusted runner measures for everything but the forward, agrees with it.
"""
from __future__ import annotations

import statistics
import time

import torch

_perf_counter = time.perf_counter


class Clock:
    def __init__(self, device: torch.device, flush_bytes: int):
        self.device = device
        self.cuda = device.type == "cuda"
        self.flush_buffer = torch.empty(max(1, flush_bytes // 4), dtype=torch.float32, device=device)
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def flush(self) -> None:
        self.flush_buffer.fill_(1.0)

    def timed(self, fn, args):
        """(fn(*args), a function returning the call's milliseconds once the device is synchronised)."""
        if self.cuda:
            self.start.record()
            out = fn(*args)
            self.end.record()
            return out, lambda: self.start.elapsed_time(self.end)
        a = _perf_counter()
        out = fn(*args)
        ms = (_perf_counter() - a) * 1000
        return out, lambda: ms


def summarize(times: list[float]) -> dict:
    ts = sorted(times)
    n = len(ts)

    def pct(p):
        return ts[min(n - 1, max(0, int(round(p * (n - 1)))))]
    return {"trials": n, "median_ms": statistics.median(ts), "mean_ms": statistics.fmean(ts),
            "std_ms": statistics.pstdev(ts) if n > 1 else 0.0, "min_ms": ts[0], "max_ms": ts[-1],
            "p10_ms": pct(0.10), "p90_ms": pct(0.90)}


def measure_bandwidth(device: torch.device) -> float:
    """Device-to-device copy rate in GB/s, counting bytes read plus bytes written."""
    if device.type != "cuda":
        return 0.0
    n = 256 * 1024 * 1024
    a = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    reps = 10
    for _ in range(reps):
        b.copy_(a)
    e.record()
    torch.cuda.synchronize()
    ms = s.elapsed_time(e) / reps
    return 2 * n / (ms * 1e-3) / 1e9
