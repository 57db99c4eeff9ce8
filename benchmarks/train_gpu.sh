#!/usr/bin/env bash
# Training throughput on the GPU machine: the policy-gradient step of vinci (train_step_bench) and
# the same step in PyTorch eager (train_step_hf.py), on a randomly initialised Qwen2.5-1.5B shape,
# every parameter trained, same batch; with PACK_ROWS=N also vinci's step with the sequences packed
# into rows of N tokens (each attending within itself, as SFT and RL pack). Then the libtorch model
# tests (vinci_llm_tests: the bf16 goldens and packing on this GPU).
# Usage (repository root): benchmarks/train_gpu.sh [OUT_DIR] [BATCH] [PROMPT] [RESPONSE]
set -uo pipefail
OUT=${1:-bench-out}
BATCH=${2:-8}
PROMPT=${3:-512}
RESPONSE=${4:-512}
PACK_ROWS=${PACK_ROWS:-0}
PROFILE=${PROFILE:-0}  # N > 0: also list the N costliest GPU kernels of one vinci step
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=ON -DVINCI_BUILD_BENCHMARKS=ON -DVINCI_BUILD_LLM_BENCHMARK=ON train_step_bench vinci_llm_tests
SHAPE=benchmarks/llm/qwen2_5_1_5b
"$BUILD/benchmarks/train_step_bench" --config-dir $SHAPE --batch "$BATCH" --prompt "$PROMPT" --response "$RESPONSE" \
  --profile "$PROFILE" 2>"$OUT/train_vinci.log" | tee "$OUT/train.jsonl"
[ "$PACK_ROWS" -gt 0 ] && "$BUILD/benchmarks/train_step_bench" --config-dir $SHAPE --batch "$BATCH" --prompt "$PROMPT" \
  --response "$RESPONSE" --pack-rows "$PACK_ROWS" 2>>"$OUT/train_vinci.log" | tee -a "$OUT/train.jsonl"
python3 benchmarks/train_step_hf.py --config-dir $SHAPE --batch "$BATCH" --prompt "$PROMPT" --response "$RESPONSE" \
  2>"$OUT/train_hf.log" | tee -a "$OUT/train.jsonl"
tail -n 3 "$OUT/train_hf.log"
[ "$PROFILE" -gt 0 ] && grep -A $((PROFILE + 1)) "^profiled step" "$OUT/train_vinci.log"
python3 - "$OUT/train.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'engine':<15} {'batch':>5} {'seq':>6} {'step s':>8} {'tokens/s':>10} {'TFLOP/s':>8} {'MFU':>6}")
for r in rows:
    print(f"{r['engine']:<15} {r['batch']:>5} {r['prompt'] + r['response']:>6} {r['step_s']:>8.3f} "
          f"{r['tokens_per_s']:>10.0f} {r['tflops']:>8.1f} {100 * r['mfu']:>5.1f}%")
PY
(cd "$BUILD/tests" && ./vinci_llm_tests >"$OUT/llm_tests.log" 2>&1; echo "vinci_llm_tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/llm_tests.log" | tr '\n' ' ')")
