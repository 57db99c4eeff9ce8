"""One timing loop for candidates and baselines alike.

Each trial: refresh the inputs in place (so nothing can be cached across calls), flush the cache
by writing a buffer larger than it, then time one call: CUDA events on the current stream on a
GPU, the monotonic clock on the CPU. The harness's own timers are bound at import, before any
candidate code runs, so patching torch.cuda.Event or time.perf_counter later changes nothing here.
"""
from __future__ import annotations

import statistics
import time

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_elapsed_time = torch.cuda.Event.elapsed_time
_record = torch.cuda.Event.record
_synchronize = torch.cuda.synchronize


class Timer:
    def __init__(self, device: torch.device, flush_bytes: int):
        self.device = device
        self.cuda = device.type == "cuda"
        n = max(1, flush_bytes // 4)
        self.flush_buffer = torch.empty(n, dtype=torch.float32, device=device)
        self.refreshes = 0

    def sync(self):
        if self.cuda:
            _synchronize(self.device)

    def flush(self):
        self.flush_buffer.fill_(1.0)

    def run(self, fn, buffers, bases, cfg: dict, budget_s: float) -> dict:
        """Times fn(*buffers) per cfg; returns stats in milliseconds and the wall-clock cross-check."""
        trials = int(cfg.get("trials", 100))
        min_trials = int(cfg.get("min_trials", 10))
        warmup = int(cfg.get("warmup", 5))
        warmup_ms = float(cfg.get("warmup_ms", 25.0))
        start = _perf_counter()
        t0 = _perf_counter()
        done = 0
        while done < warmup or (_perf_counter() - t0) * 1000 < warmup_ms and done < 100 * warmup:
            self._refresh(buffers, bases)
            fn(*buffers)
            done += 1
        self.sync()

        times = []
        if self.cuda:
            events = [(_Event(enable_timing=True), _Event(enable_timing=True)) for _ in range(trials)]
        for i in range(trials):
            self._refresh(buffers, bases)
            self.flush()
            if self.cuda:
                s, e = events[i]
                _record(s)
                fn(*buffers)
                _record(e)
            else:
                a = _perf_counter()
                fn(*buffers)
                times.append((_perf_counter() - a) * 1000)
            if i + 1 >= min_trials and _perf_counter() - start > budget_s:
                trials = i + 1
                break
        self.sync()
        if self.cuda:
            times = [_elapsed_time(s, e) for s, e in events[:trials]]
        stats = summarize(times)
        if self.cuda:
            stats["wall_median_ms"] = self._wall_clock(fn, buffers, bases, min(10, trials))
        return stats

    def _wall_clock(self, fn, buffers, bases, n: int) -> float:
        """Median time of a call bracketed by device-wide synchronisations (catches side streams)."""
        walls = []
        for i in range(n):
            self._refresh(buffers, bases)
            self.flush()
            _synchronize()
            a = _perf_counter()
            fn(*buffers)
            _synchronize()
            walls.append((_perf_counter() - a) * 1000)
        return statistics.median(walls)

    def _refresh(self, buffers, bases):
        # A different, slightly scaled copy before every call: a cache keyed on pointers or on
        # sampled values never hits, and the values stay in the task's input domain (factor in
        # [0.95, 1)). 16-bit inputs cannot resolve fine steps, so theirs repeat every 50 calls.
        self.refreshes += 1
        for buf, base in zip(buffers, bases):
            if isinstance(buf, torch.Tensor) and buf.is_floating_point():
                step = 1e-3 if buf.element_size() <= 2 else 1e-6
                period = int(0.05 / step)
                torch.mul(base, 1.0 - step * (self.refreshes % period + 1), out=buf)


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
    s, e = _Event(enable_timing=True), _Event(enable_timing=True)
    _record(s)
    reps = 10
    for _ in range(reps):
        b.copy_(a)
    _record(e)
    _synchronize()
    ms = _elapsed_time(s, e) / reps
    return 2 * n / (ms * 1e-3) / 1e9
