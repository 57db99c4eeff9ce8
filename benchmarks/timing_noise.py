#!/usr/bin/env python3
"""Where a small kernel's timing noise comes from (issue 16): one fresh process times a task's eager
Model and a candidate's ModelNew the judge's way (an L2 flush, CUDA events around one call, a
synchronisation; python/vinci_runner/timing.py), and separately
  host_us   the host's time inside forward (no synchronisation): launch work, Python included;
  gpu_ms    the events with the host's launch hidden: the stream is held by a GPU sleep while the
            host launches, so the events see the kernels' GPU time only.
Each figure is the median of BLOCKS blocks of CALLS calls, printed per block, so that a shift
between blocks of one process can be told from one between processes.

    timing_noise.py TASK.py CANDIDATE.py [--calls 20] [--blocks 3]   -> one JSON line
"""
import argparse
import importlib.util
import json
import statistics
import sys
import time

import torch


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("candidate")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=3)
    a = ap.parse_args()
    dev = torch.device("cuda")
    task, cand = load(a.task, "task"), load(a.candidate, "candidate")
    torch.manual_seed(0)
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    models = {"eager": task.Model(*task.get_init_inputs()).to(dev), "candidate": cand.ModelNew(*task.get_init_inputs()).to(dev)}
    flush = torch.empty(2 * torch.cuda.get_device_properties(dev).L2_cache_size // 4, device=dev)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # cycles of torch.cuda._sleep per ms, so that the hold outlasts any launch we expect (2 ms)
    start.record(); torch.cuda._sleep(1_000_000); end.record(); torch.cuda.synchronize()
    hold = int(2 * 1_000_000 / start.elapsed_time(end))

    def one(model, mode):
        flush.fill_(1.0)
        if mode == "gpu":
            torch.cuda._sleep(hold)
        start.record()
        t = time.perf_counter()
        model(*inputs)
        host = (time.perf_counter() - t) * 1e6
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end), host

    out = {"task": a.task.rsplit("/", 1)[-1][:-3]}
    with torch.no_grad():
        for name, model in models.items():
            for _ in range(5):
                one(model, "judge")
            blocks = []
            for _ in range(a.blocks):
                judge = [one(model, "judge") for _ in range(a.calls)]
                gpu = [one(model, "gpu")[0] for _ in range(a.calls)]
                blocks.append({"judge_ms": statistics.median(j for j, _ in judge),
                               "host_us": statistics.median(h for _, h in judge), "gpu_ms": statistics.median(gpu)})
            out[name] = blocks
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
