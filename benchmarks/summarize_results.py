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
    if os.path.exists(f"{out}/sandbox.json"):
        print(f"sandbox: {json.load(open(f'{out}/sandbox.json'))['describe']}")
    seconds = {}
    if os.path.exists(f"{out}/throughput.txt"):
        for line in open(f"{out}/throughput.txt"):
            name, value = line.split()
            seconds[name] = float(value)

    print("\n## runs")
    print(f"  {'run':<22} {'results':>7} {'correct':>7} {'seconds':>8} {'per min':>8}")
    for name, s in seconds.items():
        rows = load(f"{out}/{name}.jsonl")
        correct = sum(r["class"] == "correct" for r in rows)
        print(f"  {name:<22} {len(rows):>7} {correct:>7} {s:>8.1f} {60 * len(rows) / s if s else 0:>8.1f}")

    for name in ("warm_new", "cold_new", "smoke"):
        rows = load(f"{out}/{name}.jsonl")
        if not rows:
            continue
        old = {r["task"]: r for r in load(f"{out}/{name.replace('new', 'old')}.jsonl")}
        print(f"\n## CUDA solutions ({name}): {sum(r['class'] == 'correct' for r in rows)}/{len(rows)} correct")
        for r in rows:
            if r["class"] != "correct":
                print(f"  NOT CORRECT {r['task']}: {r['class']}/{r['reason']}: {r['message'][:400]}")
        print(f"  {'task':<30} {'eager':>8} {'kernel':>8} {'old':>8} {'speedup':>7} {'interval':>13} {'cover':>6} "
              f"{'calls/w':>7} {'windows':>7} {'opened':>6} flags")
        for r in sorted((r for r in rows if r["class"] == "correct"), key=lambda r: r["task"]):
            c = r.get("timing_check") or {}
            o = old.get(r["task"], {}).get("timing") or {}
            lo, hi = r.get("speedup_eager_interval") or [float("nan")] * 2
            print(f"  {r['task']:<30} {r['eager']['median_ms']:>8.4f} {r['timing']['median_ms']:>8.4f} "
                  f"{o.get('median_ms', float('nan')):>8.4f} {r.get('speedup_eager', 0):>7.3f} {lo:>6.3f}-{hi:<6.3f} "
                  f"{r.get('coverage') or 0:>6.3f} {c.get('calls_per_window', 1):>7} {c.get('windows', 0):>7} "
                  f"{c.get('opened', 0):>6} {','.join(r.get('flags', []))}")
        phases = {}
        for r in rows:
            for k, v in (r.get("phase_seconds") or {}).items():
                phases.setdefault(k, []).append(v)
        print("  mean seconds per phase: " + ", ".join(f"{k} {statistics.fmean(v):.2f}" for k, v in sorted(phases.items())))
        break

    for name in sorted(n for n in os.listdir(out) if n.startswith("corpus_") and n.endswith(".txt")):
        print(f"\n## {name[:-4]}")
        for line in open(f"{out}/{name}"):
            if line.startswith(("UNEXPECTED", "expectations")):
                print("  " + line.rstrip()[:400])
        counts = {}
        for r in load(f"{out}/{name[:-4]}.jsonl"):
            key = f"{r['class']}/{r['reason']}"
            counts[key] = counts.get(key, 0) + 1
        print("  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-out")
