#!/usr/bin/env bash
# Timing noise of issue 16's benches: the candidates a bench-model run saved (one a held-out task,
# greedy) are evaluated again from an empty cache, eager baselines included, so that only the
# timing can change; benchmarks/learning_retime.py then counts the tasks whose fast_1 verdict
# flipped against the bench's own. A model's fast_1 moves by that much with no change to the model.
# Usage (repository root): STATE_IN=DIR benchmarks/learning_retime.sh OUT_DIR
# Environment: STATE_IN (a folder of learning_gpu.sh's state.tgz.part-*), BENCHES ("sft_no_skills
# sft": the benches to time again, in turn), BUDGET (seconds for the whole job, 420), TRIALS (20, as
# learning_gpu.sh's benches), SCALE (1: the tasks' sizes times this, `vinci eval --scale`), REPEATS
# (1: measurements of each bench, each from an empty cache; with 2 the flips between them are counted
# too), CORRECT_ONLY (0; 1 times only the tasks the bench found correct, the only ones that can flip),
# TASKS (the held-out tasks to time against: the state's by default; e.g. the same curriculum made
# again with other --rows and --cols, whose tasks keep their names and ops).
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
  correct=$(python3 -c 'import json,sys; print(" ".join(a["task"] for a in map(json.loads, open(sys.argv[1])) if a["class"] == "correct"))' \
    "$S/bench-$name/attempts.jsonl")
  for f in "$S/bench-$name"/candidates/level*/*/sample0_t0.py; do
    task=$(basename "$(dirname "$f")") level=$(basename "$(dirname "$(dirname "$f")")")
    [ "${CORRECT_ONLY:-0}" = 1 ] && [[ " $correct " != *" $level/$task "* ]] && continue
    mkdir -p "$flat/$level" && cp "$f" "$flat/$level/$task.py"
  done
  cp "$S/bench-$name/attempts.jsonl" "$OUT/bench-$name-attempts.jsonl"
  for ((rep = 1; rep <= ${REPEATS:-1}; rep++)); do
    left=$((BUDGET - ($(date +%s) - T0) - 20))
    [ "$left" -gt 60 ] || { echo "no time left for $name, measurement $rep"; break; }
    suffix=$([ "$rep" = 1 ] && echo "" || echo ".$rep")
    "$VINCI" eval --tasks "$(realpath "${TASKS:-$S/cur/heldout}")" --candidates "$flat" --device cuda --cache-dir "$S/cache-$name$suffix" \
      --scale "${SCALE:-1}" --no-compile-baseline --trials "${TRIALS:-20}" --time-budget 1 --deadline "$left" \
      --out "$OUT/retime-$name$suffix.jsonl" >"$OUT/retime-$name$suffix.txt" 2>"$S/retime-$name$suffix.log"
    echo "$name, measurement $rep (scale ${SCALE:-1}): eval exit $? at $(($(date +%s) - T0)) s"
  done
done
python3 benchmarks/learning_retime.py "$OUT"
echo "job: $(($(date +%s) - T0)) s"
