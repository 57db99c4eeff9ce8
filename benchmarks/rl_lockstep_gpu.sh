#!/usr/bin/env bash
# RL throughput with tasks in lockstep (`[run] parallel_tasks`) against one task at a time, and on one
# GPU against several: one co-evolution step of the same 8 training tasks from the SFT model of the learning run
# (benchmarks/learning_gpu.sh's state, carried as .learning-state), with that run's rl.toml but for
# the step count, the tasks and parallel_tasks, each from an empty cache so that
# both pay for their own baselines and Triton builds. A run the time limit stops is measured by the
# candidate files it wrote (each written as its generation ends) over its wall time.
# Usage (repository root): benchmarks/rl_lockstep_gpu.sh OUT_DIR
# Environment: PARALLEL ("8 1", the parallel_tasks values, in order), GPUS ("all": for each
# parallel_tasks value, a run per entry, each a CUDA_VISIBLE_DEVICES such as 0 or 0,1; the evaluator
# runs a judge per visible GPU), TASKS (8), LIMIT (seconds a run may take, 230), STATE_IN
# (.learning-state), MODEL (sft-run/final: the state's model the step starts from), CURRICULUM
# (`vinci curriculum` arguments making the training tasks anew, e.g. the state's at other --rows and
# --cols; the state's cur/ by default).
set -uo pipefail
OUT=${1:-lockstep-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI=$(realpath "$BUILD/src/cli/vinci")
S=$(mktemp -d /tmp/lockstep-XXXX)
MODEL=${MODEL:-sft-run/final}
cat "${STATE_IN:-.learning-state}"/state.tgz.part-* | tar xzf - -C "$S" ./cur "./$MODEL" ./skills.db ./rl.toml ||
  { echo "no learning state to start from"; exit 1; }
TASKS_DIR=$S/cur/train
if [ -n "${CURRICULUM:-}" ]; then
  # shellcheck disable=SC2086 # CURRICULUM is a list of arguments
  "$VINCI" curriculum --out "$S/cur-made" $CURRICULUM >"$OUT/curriculum.log" 2>&1 || { tail -3 "$OUT/curriculum.log"; exit 1; }
  TASKS_DIR=$S/cur-made/train
fi
ROWS=()
for P in ${PARALLEL:-8 1}; do
for G in ${GPUS:-all}; do
  R=$P-${G//,/_}
  # learning_gpu.sh's rl.toml names parallel_tasks since session 10; a second one would be a TOML error.
  sed -e "s/^steps = .*/steps = 1/" -e "s/^tasks_per_step = .*/tasks_per_step = ${TASKS:-8}/" \
    -e "/^parallel_tasks = /d" -e "s/^\[run\]$/[run]\nparallel_tasks = $P/" "$S/rl.toml" >"$S/rl-$R.toml"
  cp "$S/skills.db" "$S/skills-$R.db"
  visible=()
  [ "$G" != all ] && visible=(env CUDA_VISIBLE_DEVICES="$G")
  t0=$(date +%s.%N)
  VINCI_CACHE=$S/cache-$R timeout "${LIMIT:-230}" "${visible[@]}" "$VINCI" train rl --config "$S/rl-$R.toml" \
    --model "$S/$MODEL" --model-device cuda --tasks "$TASKS_DIR" --out "$S/rl-$R" \
    --skills "$S/skills-$R.db" --device cuda --no-compile-baseline --trials 20 --time-budget 1 \
    >"$OUT/rl-$R.txt" 2>"$OUT/rl-$R.log"
  rc=$?
  wall=$(python3 -c "import time; print(f'{time.time() - $t0:.0f}')")
  files=$(find "$S/rl-$R/candidates" -name '*.py' 2>/dev/null | wc -l)
  metrics=$(python3 - "$S/rl-$R/metrics.jsonl" <<'PY'
import json, sys
try:
    m = json.loads(open(sys.argv[1]).readline())
    print(f"{m['step_s']:.0f} | {m['candidates']} | {m['candidates_per_min']:.1f} | {m['generate_s']:.0f} | "
          f"{m['evaluate_s']:.0f} | {m.get('reward_mean_policy', float('nan')):.3f}")
except (OSError, ValueError, KeyError):
    print("- | - | - | - | - | -")
PY
)
  ROWS+=("| $P | $G | $rc | $wall | $files | $(python3 -c "print(f'{60 * $files / max($wall, 1):.1f}')") | $metrics |")
  tail -3 "$OUT/rl-$R.log"
done
done
cat "$OUT/gpu.txt"
echo "| parallel_tasks | GPUs | exit | wall s | candidate files | files/min | step s | candidates | candidates/min (evaluate) | generate s | evaluate s | reward |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
