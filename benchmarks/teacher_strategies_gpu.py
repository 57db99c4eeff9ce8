"""The procedural teacher's strategies on a GPU: each Triton solution of a curriculum (`vinci curriculum`
with any families, e.g. `--long-rows N`, `--short-rows N` or `--matmul N`, then `vinci teach`) checked
against its task's Model on the GPU (as the judge compares: its tolerances, widened by the task
reference's own error against an fp64 reference), then timed against PyTorch eager with CUDA events (median of the
timed calls, after a warm-up), with the memory bandwidth each reaches (the inputs read once and the
output written once; a matmul's weight is not counted).

    python3 benchmarks/teacher_strategies_gpu.py CURRICULUM_DIR TEACH_DIR [--calls 50] [--out FILE.jsonl]

The wrong strategies are checked too (a wrong one may match where its flaw does not show at the shape).
"""
import argparse
import copy
import importlib.util
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from vinci_worker import compare  # noqa: E402
from vinci_worker.judge import DEFAULTS  # noqa: E402


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(fn, inputs, calls: int) -> float:
    for _ in range(5):
        fn(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("curriculum")
    parser.add_argument("teach")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    listing = [json.loads(line) for line in open(os.path.join(args.teach, "teacher.jsonl"))]
    families = {}  # (split, id) -> the family the curriculum counts it in
    for line in open(os.path.join(args.curriculum, "curriculum.jsonl")):
        record = json.loads(line)
        families[(record["split"], record["id"])] = ("long-rows" if "long_rows" in record["tokens"] else
                                                     "short-rows" if "short_rows" in record["tokens"] else
                                                     record["family"])
    rows, eager_ms, failed = [], {}, 0
    for r in listing:
        task = load(os.path.join(args.curriculum, r["split"], r["id"] + ".py"), "task")
        torch.manual_seed(0)
        reference = task.Model(*task.get_init_inputs()).cuda()
        torch.manual_seed(0)
        try:
            candidate = load(os.path.join(args.teach, r["file"]), "solution").ModelNew(*task.get_init_inputs()).cuda()
        except Exception as e:  # noqa: BLE001 - a solution that does not load is a result, reported
            print(f"{r['file']}: does not load: {e}", file=sys.stderr)
            failed += 1
            continue
        torch.manual_seed(1)
        inputs = [(torch.randn_like(a) * 3).cuda() for a in task.get_inputs()]
        with torch.no_grad():
            expected = reference(*inputs)
            exact = copy.deepcopy(reference).double()(*[a.double() for a in inputs])
            got = candidate(*inputs)
            same = compare.compare([got], [expected], DEFAULTS["tolerances"], finite_only=True, exact=[exact])["ok"]
            error = (got - expected).abs().max().item() if got.shape == expected.shape else float("inf")
            if r["correct"] and not same:
                failed += 1
            if r["id"] not in eager_ms:
                eager_ms[r["id"]] = median_ms(reference, inputs, args.calls)
            ms = median_ms(candidate, inputs, args.calls) if same else float("nan")
        moved = sum(a.numel() * a.element_size() for a in inputs) + expected.numel() * expected.element_size()
        row = {"id": r["id"], "family": families[(r["split"], r["id"])], "strategy": r["strategy"], "listed_correct": r["correct"], "matches": same,
               "max_error": error, "shape": list(inputs[0].shape), "eager_ms": eager_ms[r["id"]], "ms": ms,
               "speedup": eager_ms[r["id"]] / ms if same else 0.0, "gbps": moved / ms / 1e6 if same else 0.0}
        rows.append(row)
    if args.out:
        with open(args.out, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    print(f"{'task':44} {'shape':>14} {'strategy':18} {'eager ms':>9} {'ms':>8} {'x eager':>8} {'GB/s':>6}")
    for row in rows:
        if row["listed_correct"]:
            print(f"{row['id']:44} {'x'.join(map(str, row['shape'])):>14} {row['strategy']:18} {row['eager_ms']:9.3f} "
                  f"{row['ms']:8.3f} {row['speedup']:8.2f} {row['gbps']:6.0f}")
    by_strategy = {}
    for row in rows:
        if row["listed_correct"] and row["matches"]:
            by_strategy.setdefault((row["family"], row["strategy"]), []).append(row["speedup"])
    print(f"\n{'family':12} {'strategy':24} {'tasks':>5} {'median x eager':>14} {'min':>6} {'max':>6} {'beat eager':>10}")
    for (family, strategy), speedups in sorted(by_strategy.items()):
        print(f"{family:12} {strategy:24} {len(speedups):5} {statistics.median(speedups):14.2f} {min(speedups):6.2f} "
              f"{max(speedups):6.2f} {sum(s > 1 for s in speedups):10}")
    wrong = [row for row in rows if not row["listed_correct"]]
    print(f"{sum(not row['matches'] for row in wrong)} of {len(wrong)} wrong strategies differ from the Model; "
          f"{failed} listed correct that differ or do not load")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
