#!/usr/bin/env python3
"""Where a batch-1 decode step's time goes, from two ncu runs of llm_decode_bench --profile-new
(benchmarks/decode_profile_gpu.sh): one generating 1 token (prefill and the first sample), one
generating 1 + STEPS. The second's kernels past the first's count are the STEPS decode steps.

Prints, per kernel name: launches per step, microseconds per step, share of the step's kernel time,
and the DRAM bandwidth it reached; then the kernel time of a step against the step time the
benchmark measured without the profiler (the difference is time the GPU waits on the host: launches,
copies, the sampler's synchronisations) and against the weights' roofline.

Usage: decode_profile_report.py PREFILL_CSV DECODE_CSV STEPS MEASURED_JSONL
  the CSVs: ncu --csv --print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,
  dram__bytes_write.sum; MEASURED_JSONL: llm_decode_bench --batch 1's line (step_ms, weight_GB,
  copy_bandwidth_GBps).
"""
import csv
import json
import sys
from collections import OrderedDict, defaultdict


def kernels(path: str) -> list[dict]:
    """One dict per profiled kernel, in launch order: name, ns, bytes."""
    by_id: OrderedDict = OrderedDict()
    with open(path, newline="") as f:
        rows = [line for line in f if line.startswith('"')]  # ncu's own messages are not quoted
    for row in csv.DictReader(rows):
        k = by_id.setdefault(row["ID"], {"name": row["Kernel Name"], "ns": 0.0, "bytes": 0.0})
        value = float(row["Metric Value"].replace(",", ""))
        if row["Metric Name"] == "gpu__time_duration.sum":
            k["ns"] += value
        elif row["Metric Name"].startswith("dram__bytes"):
            k["bytes"] += value
    return list(by_id.values())


def short(name: str) -> str:
    """The kernel's name without its final parameter list (an "(anonymous namespace)" stays)."""
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    name = name.removeprefix("void ")
    return name if len(name) <= 100 else name[:97] + "..."


def main() -> int:
    prefill_csv, decode_csv, steps, measured_jsonl = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    first, both = kernels(prefill_csv), kernels(decode_csv)
    if len(both) <= len(first) or [k["name"] for k in both[:len(first)]] != [k["name"] for k in first]:
        print(f"the {len(both)} kernels of the longer run do not start with the {len(first)} of the shorter one")
        return 1
    decode = both[len(first):]
    measured = json.loads(open(measured_jsonl).read().split("\n")[0])
    groups: dict = defaultdict(lambda: {"launches": 0, "ns": 0.0, "bytes": 0.0})
    for k in decode:
        g = groups[short(k["name"])]
        g["launches"] += 1
        g["ns"] += k["ns"]
        g["bytes"] += k["bytes"]
    total_ns = sum(g["ns"] for g in groups.values())
    print(f"{len(decode)} kernels in {steps} decode steps ({len(decode) / steps:.0f} a step)")
    print(f"{'kernel':<100} {'per step':>8} {'us/step':>8} {'share':>6} {'GB/s':>7}")
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["ns"]):
        gbps = g["bytes"] / g["ns"] if g["ns"] else 0.0
        print(f"{name:<100} {g['launches'] / steps:>8.1f} {g['ns'] / steps / 1e3:>8.1f} {g['ns'] / total_ns:>6.1%} "
              f"{gbps:>7.0f}")
    kernel_ms = total_ns / steps / 1e6
    step_ms = measured["step_ms"]
    floor_ms = measured["weight_GB"] / measured["copy_bandwidth_GBps"] * 1e3
    print(f"\nkernel time a step {kernel_ms:.3f} ms; measured step {step_ms:.3f} ms; the GPU idle "
          f"{step_ms - kernel_ms:.3f} ms ({(step_ms - kernel_ms) / step_ms:.0%}); roofline floor {floor_ms:.3f} ms "
          f"(share {floor_ms / step_ms:.0%} measured, {floor_ms / kernel_ms:.0%} of kernel time alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
