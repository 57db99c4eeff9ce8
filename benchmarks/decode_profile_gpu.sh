#!/usr/bin/env bash
# Issue 17's profile: where a batch-1 decode step of the Qwen2.5-7B shape spends its time, on a GPU
# machine. Builds llm_decode_bench and measures the step without a profiler; then
#   1. Kineto (runs wherever PyTorch's profiler does): the costliest kernels of a 64-token
#      generation and how busy the GPU was over it;
#   2. ncu, where it can read counters (Firecracker machines, not gVisor): the bench twice (1 and
#      1 + STEPS new tokens) with the clocks and caches as they are in a real run, and
#      benchmarks/decode_profile_report.py's table: per kernel, its time a step, its share and the
#      DRAM bandwidth it reached; then kernel time against the measured step (the rest is the GPU
#      waiting on the host) and against the roofline.
# Usage (repository root): benchmarks/decode_profile_gpu.sh [OUT_DIR]; STEPS (8), GRAPHS (1; 0: eager).
set -uo pipefail
OUT=${1:-profile-out}
STEPS=${STEPS:-8}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=ON -DVINCI_BUILD_BENCHMARKS=ON -DVINCI_BUILD_LLM_BENCHMARK=ON llm_decode_bench
BENCH=("$BUILD/benchmarks/llm_decode_bench" --config-dir benchmarks/llm/qwen2_5_7b)
[ "${GRAPHS:-1}" = 0 ] && BENCH+=(--no-cuda-graphs)

"${BENCH[@]}" --batch 1 --new 128 >"$OUT/measured.jsonl" 2>"$OUT/measured.err" ||
  { tail -20 "$OUT/measured.err"; exit 1; }
cat "$OUT/measured.jsonl"
"${BENCH[@]}" --kineto-new 64 --top 30 2>"$OUT/kineto.err" | tee "$OUT/kineto.txt" || tail -20 "$OUT/kineto.err"
# Clocks and caches as the measurement had them: ncu's defaults lock the base clock and flush every
# cache before each kernel, which would slow exactly the small kernels a decode step is made of.
NCU=(ncu --profile-from-start off --graph-profiling node --clock-control none --cache-control none --csv
  --print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum)
for n in 1 $((STEPS + 1)); do
  "${NCU[@]}" --log-file "$OUT/ncu-$n.csv" "${BENCH[@]}" --profile-new "$n" >"$OUT/profiled-$n.jsonl" \
    2>"$OUT/profiled-$n.err" || { echo "ncu failed (no counters on this runtime?):"; tail -20 "$OUT/profiled-$n.err" "$OUT/ncu-$n.csv"; exit 1; }
done
python3 benchmarks/decode_profile_report.py "$OUT/ncu-1.csv" "$OUT/ncu-$((STEPS + 1)).csv" "$STEPS" \
  "$OUT/measured.jsonl" | tee "$OUT/report.txt"
