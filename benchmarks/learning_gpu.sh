#!/usr/bin/env bash
# Issue 16's learning run on one GPU, through vinci's own commands: a curriculum, a tokenizer and a
# model from nothing, SFT data from the procedural teacher (real Triton evaluation), SFT, then
# co-evolution RL on the training tasks, and bench-model on the held-out tasks for four models: SFT
# and RL, each with skills picked from a library and without. benchmarks/learning_report.py turns
# the four summaries into docs/learning.json's table.
#
# The run is longer than one GPU job may be, so it goes in stages, each skipped once done, and any
# invocation does what its time allows: sft-data and bench-model resume where a killed run left
# off, and train rl stops at --deadline with final/ saved. A job ends by packing the state (no
# optimizer state, no caches but the evaluation results) into $OUT/state.tgz.part-* of 15 MiB; the
# next job gets them back as STATE_IN (see docs/learning.md for the commands).
# Usage (repository root): benchmarks/learning_gpu.sh OUT_DIR
# Environment: BUDGET (seconds this job may spend, 540), STATE_IN (a folder of state.tgz.part-*),
# SEED (0), ELEMENTWISE (12), ROWWISE (12), HELDOUT (0.33); sft-data's SAMPLES (2, rollouts per
# scheme), TURNS (2), MAX_TASKS (0: every training task) and FIRST_TURNS (0: unevaluated first turns per
# training task, added to the SFT data; EVALUATED=0 makes only those, with no GPU); SFT_EPOCHS (40), SFT_LR (1e-3); RL_STEPS (4), RL_TASKS (4 a step), RL_SAMPLES
# (1), RL_TURNS (2; 1 with EVALUATED=0, whose data teaches no turn after feedback), RL_TEMPERATURE (1.0), RL_LR (3e-5), RL_PARALLEL (8: tasks in lockstep), RL_CONTINUE (0; 1: a run the deadline stops
# goes on in the next job, when the machine is still warm); TRIALS (20); BENCHES (all: a list of the
# benches this job may run, e.g. "sft_no_skills"); SHAPE_ROWS and SHAPE_COLS (the curriculum's
# --rows and --cols; its defaults give tensors of 16-512 MB, whose timings on an H200 are mostly the
# host's launch work: docs/learning.md) and SCALE (1: --scale of every evaluation, SFT data's,
# RL's and the benches'). A second RL stage on a state whose run is done: RL_DIR (rl: its folder,
# marker and benches' names), RL_MODEL (sft-run/final: the model it starts from, relative to the
# state) and CUR (cur: the curriculum RL and the benches draw from; one not in the state is made with
# the setup's seed and counts at SHAPE_ROWS and SHAPE_COLS, so its tasks are the same but their
# sizes). With several GPUs, RL's
# evaluation uses them all and the two benches of a model run at once.
set -uo pipefail
OUT=${1:-learning-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-540}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI=$(realpath "$BUILD/src/cli/vinci")
S=$(realpath -m "$BUILD/learning")
mkdir -p "$S"
if [ -n "${STATE_IN:-}" ] && ls "$STATE_IN"/state.tgz.part-* >/dev/null 2>&1; then
  cat "$STATE_IN"/state.tgz.part-* | tar xzf - -C "$S" || { echo "the carried state does not unpack"; exit 1; }
fi
export VINCI_CACHE=$S/cache
SEED=${SEED:-0}
EVAL=(--device cuda --no-compile-baseline --trials "${TRIALS:-20}" --time-budget 1 --scale "${SCALE:-1}")
done_() { [ -e "$S/done.$1" ]; }
mark() { touch "$S/done.$1"; echo "stage $1 done at $(($(date +%s) - T0)) s"; }
# Runs a command with what is left of the job (less 45 s to pack the state); 124 when none is left.
bounded() {
  local t=$(($(left) - 45))
  [ "$t" -gt 20 ] || return 124
  timeout "$t" "$@"
}

# curriculum DIR LOG: the run's curriculum (its seed, counts and shapes) in $S/DIR.
curriculum() {
  $VINCI curriculum --out "$S/$1" --seed "$SEED" --elementwise "${ELEMENTWISE:-12}" --rowwise "${ROWWISE:-12}" \
    --heldout-share "${HELDOUT:-0.33}" ${SHAPE_ROWS:+--rows "$SHAPE_ROWS"} ${SHAPE_COLS:+--cols "$SHAPE_COLS"} \
    >"$S/$2" 2>&1 || { tail "$S/$2"; exit 1; }
}

if ! done_ setup; then
  rm -rf "$S"/{cur,teach,tok,model0,skills.db}
  curriculum cur curriculum.log
  # The tokenizer learns from the task files (prompts quote them), the training tasks' solutions
  # (never the held-out ones'), the prompts and the skills.
  $VINCI teach --curriculum "$S/cur" --out "$S/teach" --split train >/dev/null || exit 1
  python3 scripts/train_tokenizer.py --corpus "$S/cur" "$S/teach" prompts skills --vocab-size 4096 --out "$S/tok" ||
    exit 1
  cat >"$S/config.json" <<'JSON'
{"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 6,
 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 8192,
 "tie_word_embeddings": true, "rope_theta": 100000.0}
JSON
  $VINCI init-model --config "$S/config.json" --tokenizer "$S/tok" --out "$S/model0" --seed "$SEED" \
    --dtype bfloat16 || exit 1
  $VINCI skills --db "$S/skills.db" import skills/seed.jsonl >/dev/null &&
    $VINCI skills --db "$S/skills.db" import skills/curriculum.jsonl >/dev/null || exit 1
  mark setup
fi
CUR=${CUR:-cur}
done_ setup && [ ! -e "$S/$CUR/curriculum.jsonl" ] && curriculum "$CUR" "$CUR.log"

if ! done_ sftdata; then
  resume=()
  [ -e "$S/sft/episodes.jsonl" ] && resume=(--resume) || rm -rf "$S/sft"
  only=()
  [ "${EVALUATED:-1}" = 0 ] && only=(--only-first-turns) resume=() && rm -rf "$S/sft"
  bounded "$VINCI" sft-data --curriculum "$S/cur" --out "$S/sft" --turns "${TURNS:-2}" --schemes 1 --samples "${SAMPLES:-2}" \
    --max-tasks "${MAX_TASKS:-0}" --first-turns "${FIRST_TURNS:-0}" "${only[@]}" --seed "$SEED" \
    "${EVAL[@]}" "${resume[@]}" >>"$S/sft-data.log" 2>&1 && mark sftdata
  tail -1 "$S/sft-data.log"
fi

if done_ sftdata && ! done_ sft && [ "$(left)" -gt 150 ]; then
  rm -rf "$S/sft-run"
  cat $(ls "$S"/sft/{sft,first_turns}.jsonl 2>/dev/null) >"$S/sft-all.jsonl"
  bounded "$VINCI" train sft --data "$S/sft-all.jsonl" --model "$S/model0" --out "$S/sft-run" --device cuda \
    --lora-rank 0 --epochs "${SFT_EPOCHS:-40}" --lr "${SFT_LR:-1e-3}" --warmup-steps 20 --batch-tokens 32768 \
    --row-tokens 8192 --max-sequence-tokens 8192 --no-filter --seed "$SEED" >"$S/sft.log" 2>&1 && mark sft
  tail -1 "$S/sft.log"
fi

# bench NAME MODEL [--library FILE ...]: greedy, one answer per held-out task.
bench() {
  local name=$1 model=$2
  shift 2
  done_ "bench-$name" && return 0
  [ -n "${BENCHES:-}" ] && [[ " $BENCHES " != *" $name "* ]] && return 0
  local resume=()
  [ -e "$S/bench-$name/run.json" ] && resume=(--resume)
  bounded "$VINCI" bench-model --model "$model" --model-device cuda --tasks "$S/$CUR/heldout" --out "$S/bench-$name" \
    --temperature 0 --max-new-tokens 1024 --selection-max-new-tokens 256 --seed "$SEED" "${EVAL[@]}" "$@" \
    "${resume[@]}" >"$S/bench-$name.txt" 2>"$S/bench-$name.log" && mark "bench-$name"
}
# bench_both NAME MODEL LIBRARY...: the model with skills from the library, then NAME_no_skills
# without. With several GPUs the two run at once, each timing on a GPU of its own.
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
bench_both() {
  local name=$1 model=$2
  shift 2
  if [ "$NGPU" -gt 1 ]; then
    CUDA_VISIBLE_DEVICES=0 bench "$name" "$model" --library "$@" &
    CUDA_VISIBLE_DEVICES=1 bench "${name}_no_skills" "$model" &
    wait
  else
    bench "$name" "$model" --library "$@"
    bench "${name}_no_skills" "$model"
  fi
}
done_ sft && bench_both sft "$S/sft-run/final" skills/seed.jsonl skills/curriculum.jsonl

# RL_CONTINUE=1: a run the deadline stopped is not done, and the next job on the same warm machine
# resumes it from its checkpoint, optimizer state included (the packed state carries neither).
RL_DIR=${RL_DIR:-rl}
RL=$S/$RL_DIR
rl_resume=()
! done_ "$RL_DIR" && ls "$RL"/checkpoints/* >/dev/null 2>&1 && rl_resume=(--resume)
if done_ bench-sft_no_skills && ! done_ "$RL_DIR" && [ "$(left)" -gt 300 ]; then
  if [ ${#rl_resume[@]} -eq 0 ]; then
    # Run 3 found a model taught first turns only writes no kernel at all after feedback (82 of 96).
    [ "${EVALUATED:-1}" = 0 ] && default_turns=1 || default_turns=2
    cat >"$RL.toml" <<TOML
[run]
steps = ${RL_STEPS:-4}
tasks_per_step = ${RL_TASKS:-4}
parallel_tasks = ${RL_PARALLEL:-8}
seed = $SEED
checkpoint_every = 1000
[agents]
schemes = 1
samples = ${RL_SAMPLES:-1}
turns = ${RL_TURNS:-$default_turns}
temperature = ${RL_TEMPERATURE:-1.0}
max_new_tokens = 1024
selection_max_new_tokens = 256
summary_max_new_tokens = 1024
verify_repeats = 1
[model]
training = "full"
[optimizer]
lr = ${RL_LR:-3e-5}
TOML
    rm -rf "$RL" "$RL.txt" "$RL.log"
  fi
  # A killed run leaves no final/: --deadline starts no step that the slowest one so far would carry
  # past it, and leaves 30 s for final/ before the state is packed.
  bounded "$VINCI" train rl --config "$RL.toml" --model "$S/${RL_MODEL:-sft-run/final}" --model-device cuda \
    --tasks "$S/$CUR/train" --out "$RL" --skills "$S/skills.db" --deadline $(($(left) - 75)) "${EVAL[@]}" \
    "${rl_resume[@]}" >>"$RL.txt" 2>>"$RL.log"
  rc=$?
  # 3: the deadline stopped it after the steps it finished, final/ saved; they are the run, unless
  # RL_CONTINUE asks the next job to go on.
  { [ $rc -eq 0 ] || { [ $rc -eq 3 ] && [ "${RL_CONTINUE:-0}" = 0 ]; }; } && [ -d "$RL/final" ] && mark "$RL_DIR"
  tail -1 "$RL.txt"
  $VINCI skills --db "$S/skills.db" export -o "$RL-library.jsonl"
fi
done_ "$RL_DIR" && bench_both "$RL_DIR" "$RL/final" "$RL-library.jsonl"

python3 benchmarks/learning_report.py "$S" "$OUT/gpu.txt" "$OUT/learning.json" "$RL_DIR" >"$OUT/report.md"
for f in sft-run/metrics.jsonl $RL_DIR/metrics.jsonl; do
  [ -s "$S/$f" ] && $VINCI plot "$S/$f" --out "$OUT/$(dirname $f)_metrics.svg" >/dev/null
done
# The state the next job needs, without optimizer state, model snapshots or evaluation scratch. Of
# the models only the newest stays (about 20 MB packed): a later RL stage starts from it (run 6's
# model was packed out after its benches, and run 7 had to start from run 5's).
rm -f "$OUT"/state.tgz.part-*
superseded=${RL_MODEL:-sft-run/final}
tar czf - -C "$S" --exclude=./cache/logs --exclude=./cache/scratch --exclude=./cache/ext --exclude=./cache/candidates \
  --exclude='./*/checkpoints' --exclude=./teach --exclude=./sft-all.jsonl $(done_ sft && echo --exclude=./model0) \
  $(done_ rl && echo --exclude=./sft-run/final) \
  $(done_ "$RL_DIR" && [ "$superseded" != sft-run/final ] && echo --exclude="./$superseded") . |
  split -b 15m - "$OUT/state.tgz.part-"
rm -f "$OUT/cmake.log"  # at most 8 files come back; the build log matters only when the build fails
ls "$S" | grep '^done\.' | tr '\n' ' '
echo
cat "$OUT/report.md"
echo "job: $(($(date +%s) - T0)) s"
