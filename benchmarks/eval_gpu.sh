#!/usr/bin/env bash
# The evaluator on a GPU machine: builds vinci, then measures what docs/benchmarks.md records.
#   1. every CUDA reference solution is correct (cold caches: also the cold throughput);
#   2. the same candidates again with a warm compile cache and warm workers (warm throughput,
#      and where each candidate's time goes);
#   3. the hack corpus and the containment cases, CUDA-only ones included, against their labels;
#   4. timing repeatability: the same candidates timed in 3 separate runs;
#   5. the torch.compile baseline on a few tasks.
# Usage (repository root): benchmarks/eval_gpu.sh [OUT_DIR] [STAGES]   STAGES: any of 13245, run in that
# order (default all). With DEADLINE=S (seconds since start), a stage that would start after S-60 is skipped.
set -uo pipefail
OUT=${1:-bench-out}
STAGES=${2:-13245}
START=$(date +%s)
DEADLINE=${DEADLINE:-100000}
want() { [[ $STAGES == *$1* ]] && (( $(date +%s) - START < DEADLINE - 60 )) || { [[ $STAGES == *$1* ]] && echo "stage $1 skipped: deadline"; return 1; }; }
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
export VINCI_CACHE=${VINCI_CACHE:-/tmp/vinci-bench-cache}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF
VINCI=$BUILD/src/cli/vinci
summary() { python3 benchmarks/summarize_results.py "$@"; }

if want 1; then
  rm -rf "$VINCI_CACHE"
  s=$(date +%s.%N)
  $VINCI eval --tasks tasks --candidates tasks/solutions/cuda --device cuda --no-compile-baseline -q \
    --out "$OUT/solutions_cold.jsonl" >"$OUT/solutions_cold.txt" 2>&1
  e=$(date +%s.%N)
  echo "cold_seconds $(python3 -c "print($e - $s)")" >"$OUT/throughput.txt"
  tail -25 "$OUT/solutions_cold.txt"
fi
if want 3; then
  $VINCI eval --tasks tasks --candidates tests/hacks --device cuda --expect --no-compile-baseline --run-timeout 30 -q \
    --out "$OUT/hacks.jsonl" >"$OUT/hacks.txt" 2>&1
  grep -E "UNEXPECTED|expectations" "$OUT/hacks.txt"
  $VINCI eval --tasks tests/adversarial/tasks --candidates tests/adversarial/candidates --device cuda --expect \
    --no-compile-baseline --run-timeout 30 -q --out "$OUT/adversarial.jsonl" >"$OUT/adversarial.txt" 2>&1
  grep -E "UNEXPECTED|expectations" "$OUT/adversarial.txt"
fi
if want 2; then
  s=$(date +%s.%N)
  $VINCI eval --tasks tasks --candidates tasks/solutions/cuda --device cuda --no-compile-baseline --no-cache -q \
    --out "$OUT/solutions_warm.jsonl" >"$OUT/solutions_warm.txt" 2>&1
  e=$(date +%s.%N)
  echo "warm_seconds $(python3 -c "print($e - $s)")" >>"$OUT/throughput.txt"
fi
if want 4; then
  for run in 1 2 3; do
    $VINCI eval --tasks tasks --candidates tasks/solutions/cuda --filter 'level1/(1_|4_|5_|10_|13_)' --device cuda \
      --no-compile-baseline --no-cache -q --out "$OUT/repeat_$run.jsonl" >/dev/null 2>&1
  done
fi
if want 5; then
  $VINCI eval --tasks tasks --candidates tasks/solutions/cuda --filter 'level1/(4_|5_|10_)|level2/1_' --device cuda \
    --rebaseline -q --out "$OUT/compile_baseline.jsonl" >"$OUT/compile_baseline.txt" 2>&1
fi
summary "$OUT"
