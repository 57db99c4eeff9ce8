"""Prints the tables of docs/benchmarks.md from the files benchmarks/eval_gpu.sh leaves in OUT_DIR."""
import json
import os
import statistics
import sys


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(out):
    cold = load(f"{out}/solutions_cold.jsonl")
    if cold:
        correct = [r for r in cold if r["class"] == "correct"]
        print(f"\n## 1. CUDA reference solutions: {len(correct)}/{len(cold)} correct")
        for r in cold:
            if r["class"] != "correct":
                print(f"  NOT CORRECT {r['task']}: {r['class']}/{r['reason']}: {r['message'][:300]}")
        print(f"  {'task':<32} {'eager ms':>9} {'kernel ms':>9} {'speedup':>8} {'coverage':>8} {'launches':>8}")
        for r in sorted(correct, key=lambda r: r["task"]):
            print(f"  {r['task']:<32} {r['eager']['median_ms']:>9.3f} {r['timing']['median_ms']:>9.3f} "
                  f"{r.get('speedup_eager', 0):>8.3f} {r.get('coverage') or 0:>8.3f} {r.get('custom_launches', 0):>8}")
        short = [r["task"] for r in correct if r["eager"]["median_ms"] < 1.0]
        print(f"  tasks under 1 ms eager: {short or 'none'}")
    tp = {}
    if os.path.exists(f"{out}/throughput.txt"):
        for line in open(f"{out}/throughput.txt"):
            k, v = line.split()
            tp[k] = float(v)
    warm = load(f"{out}/solutions_warm.jsonl")
    if tp:
        print("\n## 4. throughput")
        for key, rows in (("cold_seconds", cold), ("warm_seconds", warm)):
            if key in tp and rows:
                print(f"  {key.split('_')[0]}: {len(rows)} candidates in {tp[key]:.1f} s = "
                      f"{60 * len(rows) / tp[key]:.1f} candidates/min")
        if warm:
            over = []
            phases = {}
            for r in warm:
                ph = r.get("phase_seconds", {})
                over.append(sum(v for k, v in ph.items() if k not in ("time", "baseline")))
                for k, v in ph.items():
                    phases.setdefault(k, []).append(v)
            wall = tp["warm_seconds"] / len(warm) - statistics.fmean(phases.get("time", [0]))
            print(f"  warm wall time per candidate beyond its timing phase (builds overlap the worker): {wall:.2f} s")
            print(f"  warm serial cost per candidate beyond its timing phase (build+load+check+unload): median {statistics.median(over):.2f} s, "
                  f"mean {statistics.fmean(over):.2f} s, max {max(over):.2f} s")
            print("  mean seconds per phase (warm): " + ", ".join(
                f"{k} {statistics.fmean(v):.2f}" for k, v in sorted(phases.items())))
    runs = [load(f"{out}/repeat_{i}.jsonl") for i in (1, 2, 3)]
    if all(runs):
        print("\n## 3. repeatability: median ms in 3 separate runs")
        by_task = {}
        for run in runs:
            for r in run:
                if r["class"] == "correct":
                    by_task.setdefault(r["task"], []).append(r["timing"]["median_ms"])
        for task, ms in sorted(by_task.items()):
            spread = (max(ms) - min(ms)) / min(ms) * 100
            print(f"  {task:<32} " + " ".join(f"{m:8.4f}" for m in ms) + f"   spread {spread:.2f}%")
    comp = load(f"{out}/compile_baseline.jsonl")
    if comp:
        print("\n## 5. eager vs torch.compile baselines")
        for r in comp:
            if r.get("compile"):
                print(f"  {r['task']:<32} eager {r['eager']['median_ms']:.3f} ms, compile {r['compile']['median_ms']:.3f} ms, "
                      f"kernel {r['timing']['median_ms']:.3f} ms, speedup vs compile {r.get('speedup_compile', 0):.3f}")
            else:
                print(f"  {r['task']:<32} {r['class']}/{r['reason']} {r['message'][:200]}")
    for name in ("hacks", "adversarial"):
        rows = load(f"{out}/{name}.jsonl")
        if rows:
            classes = {}
            for r in rows:
                key = f"{r['class']}/{r['reason']}"
                classes[key] = classes.get(key, 0) + 1
            print(f"\n## 2. {name}: {len(rows)} candidates: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-out")
