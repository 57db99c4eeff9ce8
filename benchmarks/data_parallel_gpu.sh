#!/usr/bin/env bash
# Data parallelism on a 2-GPU machine (an H200 pair), over NCCL:
#  1. the equivalence check (tests/distributed/data_parallel_check): 2 ranks against 1 process over
#     the same global batch, on a randomly initialised Qwen2.5-1.5B shape in bf16, every parameter
#     trained; the tolerances are at least twice bf16's floor (one process against itself with
#     another micro-batching);
#  2. the policy step's throughput on 1 GPU and on 2 (train_step_bench under torchrun: a batch per
#     rank, gradients summed), which prices the all-reduce;
#  3. `vinci train rl` under torchrun with 2 ranks: the fixture model on level 1 of the task suite,
#     kernels evaluated on each rank's own GPU.
# Usage (repository root): benchmarks/data_parallel_gpu.sh [OUT_DIR]
set -uo pipefail
OUT=${1:-bench-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on these machines
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=ON -DVINCI_BUILD_BENCHMARKS=ON -DVINCI_BUILD_LLM_BENCHMARK=ON data_parallel_check train_step_bench vinci
grep "vinci: data parallelism" "$OUT/cmake.log"
RUN2="python3 -m torch.distributed.run --standalone --nproc-per-node 2 --no-python"
SHAPE=benchmarks/llm/qwen2_5_1_5b

echo "== 1. two ranks against one process (bf16, $SHAPE)"
$RUN2 "$BUILD/tests/data_parallel_check" --model $SHAPE --random-weights --device cuda --dtype bfloat16 --batch 16 \
  --min-length 256 --max-length 1024 --micro-batch-tokens 4096 --grad-tolerance 1e-2 --update-tolerance 1e-2 \
  --noise-floor --report "$OUT/dp_check.json" 2>"$OUT/dp_check.log"
echo "exit $?"

echo "== 2. policy-step throughput, 1 GPU and 2"
"$BUILD/benchmarks/train_step_bench" --config-dir $SHAPE --batch 8 --prompt 512 --response 512 \
  2>"$OUT/step1.log" | tee "$OUT/steps.jsonl"
$RUN2 "$BUILD/benchmarks/train_step_bench" --config-dir $SHAPE --batch 8 --prompt 512 --response 512 \
  2>"$OUT/step2.log" | tee -a "$OUT/steps.jsonl"

echo "== 3. vinci train rl, 2 ranks"
cat > "$OUT/rl.toml" <<'TOML'
[run]
steps = 2
tasks_per_step = 4
checkpoint_every = 1
[agents]
schemes = 1
samples = 2
turns = 2
max_new_tokens = 128
selection_max_new_tokens = 128
[optimizer]
lr = 1e-4
TOML
rm -rf "$OUT/rl"
start=$(date +%s.%N)
$RUN2 "$BUILD/src/cli/vinci" train rl --config "$OUT/rl.toml" --model tests/fixtures/llm/models/qwen2 \
  --chat-template tests/fixtures/llm/templates/qwen2_5.jinja --model-device cuda --tasks tasks --level 1 \
  --device cuda --trials 20 --out "$OUT/rl" >"$OUT/rl.txt" 2>"$OUT/rl.log"
echo "exit $?; $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s wall"
grep -E "joined|rank [01]: step 1: task|kernels evaluated on" "$OUT/rl.log" | head -8

python3 - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
r = json.loads((out / "dp_check.json").read_text())
print(f"\n{'2 ranks vs 1 (bf16)':<28} {'relative error':>15} {'tolerance':>10} {'floor':>10}")
print(f"{'gradient':<28} {r['grad_relative_error']:>15.3e} {r['grad_tolerance']:>10.1e} {r['floor_grad_relative_error']:>10.3e}")
print(f"{'update':<28} {r['update_relative_error']:>15.3e} {r['update_tolerance']:>10.1e} {r['floor_update_relative_error']:>10.3e}")
print(f"{'loss':<28} {r['loss_relative_error']:>15.3e}")
print(f"ranks agree: {r['ranks_agree']}  ok: {r['ok']}  ({r['trainable_parameters']:,} parameters, {r['tokens']} trained tokens)")
print(f"\n{'ranks':>5} {'step s':>8} {'tokens/s':>10} {'MFU/GPU':>8}")
for line in (out / "steps.jsonl").read_text().splitlines():
    s = json.loads(line)
    print(f"{s.get('ranks', 1):>5} {s['step_s']:>8.3f} {s['tokens_per_s']:>10.0f} {100 * s['mfu']:>7.1f}%")
rows = [json.loads(l) for l in (out / "rl" / "metrics.jsonl").read_text().splitlines()]
print(f"\ntrain rl: {len(rows)} steps, ranks {[x['ranks'] for x in rows]}, samples {[x['samples'] for x in rows]}, "
      f"library {[x['library_size'] for x in rows]}, checkpoints {sorted(p.name for p in (out / 'rl' / 'checkpoints').iterdir())}")
PY
