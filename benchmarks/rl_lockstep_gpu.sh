#!/usr/bin/env bash
# RL throughput with tasks in lockstep (`[run] parallel_tasks`) against one task at a time, on one GPU:
# one co-evolution step of the same 8 training tasks from the SFT model of the learning run
# (benchmarks/learning_gpu.sh's state, carried as .learning-state), with that run's rl.toml but for
# the step count, the tasks and parallel_tasks, each from an empty cache so that
# both pay for their own baselines and Triton builds. A run the time limit stops is measured by the
# candidate files it wrote (each written as its generation ends) over its wall time.
# Usage (repository root): benchmarks/rl_lockstep_gpu.sh OUT_DIR
# Environment: PARALLEL ("8 1", the parallel_tasks values, in order), TASKS (8), LIMIT (seconds a
# run may take, 230), STATE_IN (.learning-state).
set -uo pipefail
OUT=${1:-lockstep-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI=$(realpath "$BUILD/src/cli/vinci")
S=$(mktemp -d /tmp/lockstep-XXXX)
cat "${STATE_IN:-.learning-state}"/state.tgz.part-* | tar xzf - -C "$S" ./cur ./sft-run/final ./skills.db ./rl.toml ||
  { echo "no learning state to start from"; exit 1; }
ROWS=()
for P in ${PARALLEL:-8 1}; do
  # learning_gpu.sh's rl.toml names parallel_tasks since session 10; a second one would be a TOML error.
  sed -e "s/^steps = .*/steps = 1/" -e "s/^tasks_per_step = .*/tasks_per_step = ${TASKS:-8}/" \
    -e "/^parallel_tasks = /d" -e "s/^\[run\]$/[run]\nparallel_tasks = $P/" "$S/rl.toml" >"$S/rl-$P.toml"
  cp "$S/skills.db" "$S/skills-$P.db"
  t0=$(date +%s.%N)
  VINCI_CACHE=$S/cache-$P timeout "${LIMIT:-230}" "$VINCI" train rl --config "$S/rl-$P.toml" \
    --model "$S/sft-run/final" --model-device cuda --tasks "$S/cur/train" --out "$S/rl-$P" \
    --skills "$S/skills-$P.db" --device cuda --no-compile-baseline --trials 20 --time-budget 1 \
    >"$OUT/rl-$P.txt" 2>"$OUT/rl-$P.log"
  rc=$?
  wall=$(python3 -c "import time; print(f'{time.time() - $t0:.0f}')")
  files=$(find "$S/rl-$P/candidates" -name '*.py' 2>/dev/null | wc -l)
  metrics=$(python3 - "$S/rl-$P/metrics.jsonl" <<'PY'
import json, sys
try:
    m = json.loads(open(sys.argv[1]).readline())
    print(f"{m['step_s']:.0f} | {m['candidates']} | {m['candidates_per_min']:.1f} | {m['generate_s']:.0f} | "
          f"{m['evaluate_s']:.0f} | {m.get('reward_mean_policy', float('nan')):.3f}")
except (OSError, ValueError, KeyError):
    print("- | - | - | - | - | -")
PY
)
  ROWS+=("| $P | $rc | $wall | $files | $(python3 -c "print(f'{60 * $files / max($wall, 1):.1f}')") | $metrics |")
  tail -3 "$OUT/rl-$P.log"
done
cat "$OUT/gpu.txt"
echo "| parallel_tasks | exit | wall s | candidate files | files/min | step s | candidates | candidates/min (evaluate) | generate s | evaluate s | reward |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
