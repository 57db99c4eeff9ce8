#!/usr/bin/env bash
# Timing noise of issue 16's benches: the candidates a bench-model run saved (one a held-out task,
# greedy) are evaluated again from an empty cache, eager baselines included, so that only the
# timing can change; benchmarks/learning_retime.py then counts the tasks whose fast_1 verdict
# flipped against the bench's own. A model's fast_1 moves by that much with no change to the model.
# Usage (repository root): STATE_IN=DIR benchmarks/learning_retime.sh OUT_DIR
# Environment: STATE_IN (a folder of learning_gpu.sh's state.tgz.part-*), BENCHES ("sft_no_skills
# sft": the benches to time again, in turn), BUDGET (seconds for the whole job, 420), TRIALS (20, as
# learning_gpu.sh's benches).
set -uo pipefail
OUT=${1:-retime-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-420}
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox || exit 1
rm -f "$OUT/cmake.log"
VINCI=$(realpath "$BUILD/src/cli/vinci")
S=$(realpath -m "$BUILD/retime")
rm -rf "$S" && mkdir -p "$S"
cat "$STATE_IN"/state.tgz.part-* | tar xzf - -C "$S" || { echo "the state does not unpack"; exit 1; }
for name in ${BENCHES:-sft_no_skills sft}; do
  # bench-model keeps candidates/levelN/<task>/sample0_t0.py; eval matches levelN/<task>.py.
  flat="$S/flat-$name"
  for f in "$S/bench-$name"/candidates/level*/*/sample0_t0.py; do
    task=$(basename "$(dirname "$f")") level=$(basename "$(dirname "$(dirname "$f")")")
    mkdir -p "$flat/$level" && cp "$f" "$flat/$level/$task.py"
  done
  left=$((BUDGET - ($(date +%s) - T0) - 20))
  [ "$left" -gt 60 ] || { echo "no time left for $name"; break; }
  "$VINCI" eval --tasks "$S/cur/heldout" --candidates "$flat" --device cuda --cache-dir "$S/cache-$name" \
    --no-compile-baseline --trials "${TRIALS:-20}" --time-budget 1 --deadline "$left" --out "$OUT/retime-$name.jsonl" \
    >"$OUT/retime-$name.txt" 2>"$S/retime-$name.log"
  echo "$name: eval exit $? at $(($(date +%s) - T0)) s"
  cp "$S/bench-$name/attempts.jsonl" "$OUT/bench-$name-attempts.jsonl"
done
python3 benchmarks/learning_retime.py "$OUT"
echo "job: $(($(date +%s) - T0)) s"
