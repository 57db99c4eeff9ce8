#!/usr/bin/env bash
# The native backbone on a GPU machine: builds vinci, then
#   1. the backbone tests, whose bf16 GPU cases run only here (logits, logprobs, greedy vs fp32 truth),
#      and the fused decode kernels against ATen's path (decode_kernels_check);
#   2. checkpoints saved by vinci, loaded by transformers: same logits;
#   3. decode throughput of a Qwen2.5-7B-shaped model (random bf16 weights), vinci vs transformers'
#      generate, batch 1/16/64, prompt 512, 256 new tokens, with and without CUDA-graph decode, and
#      with the fused decode kernels switched off (VINCI_DECODE_KERNELS=0); the batch-1 roofline share.
# Usage (repository root): benchmarks/llm_gpu.sh [OUT_DIR] [BATCHES]
set -uo pipefail
OUT=${1:-bench-out}
BATCHES=${2:-1,16,64}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=ON -DVINCI_BUILD_BENCHMARKS=ON -DVINCI_BUILD_LLM_BENCHMARK=ON vinci_llm_tests llm_decode_bench decode_kernels_check vinci

FAILED=()  # what makes the script exit 1 at the end, after every table is printed

echo "== 1. backbone tests (GPU cases included)"
"$BUILD/tests/vinci_llm_tests" >"$OUT/llm_tests.txt" 2>&1 || FAILED+=("backbone tests (llm_tests.txt)")
tail -3 "$OUT/llm_tests.txt"; grep -E "bf16|FAILED" "$OUT/llm_tests.txt"
"$BUILD/benchmarks/decode_kernels_check" --config-dir benchmarks/llm/qwen2_5_7b --batch 1,5 >"$OUT/decode_kernels_check.txt" \
  2>&1 || FAILED+=("fused decode kernels (decode_kernels_check.txt)")
cat "$OUT/decode_kernels_check.txt"

echo "== 2. transformers loads vinci's checkpoints"
rm -rf /tmp/vinci-export
VINCI_EXPORT_DIR=/tmp/vinci-export "$BUILD/tests/vinci_llm_tests" --gtest_filter=Checkpoints.ExportForTransformers \
  >"$OUT/export.txt" 2>&1 || FAILED+=("checkpoint export (export.txt)")
python3 tests/fixtures/llm/check_saved_checkpoint.py /tmp/vinci-export | tee "$OUT/hf_load.txt" ||
  FAILED+=("transformers could not load the export (hf_load.txt)")

echo "== 3. decode throughput"
"$BUILD/benchmarks/llm_decode_bench" --config-dir benchmarks/llm/qwen2_5_7b --batch "$BATCHES" \
  >"$OUT/decode_vinci.jsonl" 2>"$OUT/decode_vinci.err" || { tail -20 "$OUT/decode_vinci.err"; FAILED+=("vinci decode bench"); }
"$BUILD/benchmarks/llm_decode_bench" --config-dir benchmarks/llm/qwen2_5_7b --batch "$BATCHES" --no-cuda-graphs \
  >"$OUT/decode_vinci_eager.jsonl" 2>"$OUT/decode_vinci_eager.err" ||
  { tail -20 "$OUT/decode_vinci_eager.err"; FAILED+=("vinci decode bench without CUDA graphs"); }
VINCI_DECODE_KERNELS=0 "$BUILD/benchmarks/llm_decode_bench" --config-dir benchmarks/llm/qwen2_5_7b --batch "$BATCHES" \
  >"$OUT/decode_vinci_unfused.jsonl" 2>"$OUT/decode_vinci_unfused.err" ||
  { tail -20 "$OUT/decode_vinci_unfused.err"; FAILED+=("vinci decode bench without the fused kernels"); }
python3 benchmarks/llm_decode_hf.py --config-dir benchmarks/llm/qwen2_5_7b --batch "$BATCHES" \
  >"$OUT/decode_hf.jsonl" 2>"$OUT/decode_hf.err" || { tail -20 "$OUT/decode_hf.err"; FAILED+=("HF decode bench"); }
python3 - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
load = lambda name: {r["batch"]: r for r in map(json.loads, (out / name).read_text().split("\n")[:-1] if (out / name).exists() else [])}
ours, eager, hf = load("decode_vinci.jsonl"), load("decode_vinci_eager.jsonl"), load("decode_hf.jsonl")
unfused = load("decode_vinci_unfused.jsonl")
nan = float("nan")
print(f"{'batch':>5} {'vinci tok/s':>12} {'eager tok/s':>12} {'HF tok/s':>10} {'vs HF':>6} {'step ms':>8} "
      f"{'eager ms':>9} {'unfused ms':>10} {'HF ms':>7} {'roofline':>9} {'eager':>6} {'unfused':>7}")
for b in sorted(set(ours) | set(hf) | set(eager)):
    o, e, h, u = ours.get(b, {}), eager.get(b, {}), hf.get(b, {}), unfused.get(b, {})
    ratio = o.get("decode_tokens_per_s", 0) / h["decode_tokens_per_s"] if h and o else nan
    print(f"{b:>5} {o.get('decode_tokens_per_s', nan):>12.1f} {e.get('decode_tokens_per_s', nan):>12.1f} "
          f"{h.get('decode_tokens_per_s', nan):>10.1f} {ratio:>6.2f} {o.get('step_ms', nan):>8.2f} "
          f"{e.get('step_ms', nan):>9.2f} {u.get('step_ms', nan):>10.2f} {h.get('step_ms', nan):>7.2f} "
          f"{o.get('roofline_share', nan):>9.2f} {e.get('roofline_share', nan):>6.2f} {u.get('roofline_share', nan):>7.2f}")
PY
if (( ${#FAILED[@]} )); then
  printf 'FAILED: %s\n' "${FAILED[@]}"
  exit 1
fi
