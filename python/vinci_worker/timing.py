"""The judge's statistics of timed calls: summaries, speedup intervals, bandwidth.

The judge's statistics of timed calls: their summary, a confidence interval of a speedup, and
the GPU's memory bandwidth (the roofline's floor).
"""
from __future__ import annotations

import math
import random
import statistics

import torch


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


def speedup_interval(base: list[float], mine: list[float], rounds: int = 2000, seed: int = 0) -> list[float] | None:
    """A 95% interval of median(base) / median(mine), each side's calls resampled with replacement
    (a percentile bootstrap); None with fewer than 3 calls on a side."""
    if len(base) < 3 or len(mine) < 3 or min(mine) <= 0:
        return None
    rng = random.Random(seed)
    ratios = sorted(statistics.median(rng.choices(base, k=len(base))) /
                    statistics.median(rng.choices(mine, k=len(mine))) for _ in range(rounds))
    return [ratios[int(0.025 * rounds)], ratios[min(rounds - 1, math.ceil(0.975 * rounds) - 1)]]
