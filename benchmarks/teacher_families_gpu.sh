#!/usr/bin/env bash
# The teacher's strategies of issue 39's technique families against eager, on the GPU machine: builds
# vinci there, writes a curriculum of long-row, short-row and matmul tasks (`vinci curriculum`), teaches
# it (`vinci teach`), and checks and times every solution (benchmarks/teacher_strategies_gpu.py: its
# table, then the median speedup of each family and strategy).
# Usage (repository root): benchmarks/teacher_families_gpu.sh OUT_DIR
#   LONG=12 SHORT=12 MATMUL=12 SEED=5 CALLS=50 (the defaults) choose the tasks and the timed calls;
#   EXTRA adds options to `vinci curriculum` (e.g. EXTRA="--short-row-counts 1048576 4194304").
set -uo pipefail
OUT=${1:-families-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci
rm -f "$OUT/cmake.log"  # at most 8 files come back; the build log matters only when the build fails
work=$(mktemp -d)
"$BUILD/src/cli/vinci" curriculum --out "$work/curriculum" --elementwise 0 --rowwise 0 --long-rows "${LONG:-12}" \
  --short-rows "${SHORT:-12}" --matmul "${MATMUL:-12}" --seed "${SEED:-5}" ${EXTRA:-} | tee "$OUT/curriculum.txt" || exit 1
"$BUILD/src/cli/vinci" teach --curriculum "$work/curriculum" --out "$work/teach" >"$OUT/teach.txt" || exit 1
python3 benchmarks/teacher_strategies_gpu.py "$work/curriculum" "$work/teach" --calls "${CALLS:-50}" \
  --out "$OUT/strategies.jsonl"
