#!/usr/bin/env bash
# MRS in bf16 (issue 16, item 7): the same short `vinci train rl` run on CUDA (the tiny Qwen2 fixture
# in bf16, level 1 of tasks/) with the old policy taken from the sampler's logprobs, as before, and
# from the trainer's own forward (the default now), printing per step the sequences MRS dropped
# and |trainer - sampler| per token.
# Usage (repository root): benchmarks/mrs_gpu.sh [OUT_DIR]
set -uo pipefail
OUT=${1:-mrs-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI="$BUILD/src/cli/vinci"
for old in sampler trainer; do
  cat > "$OUT/$old.toml" <<TOML
[run]
steps = ${STEPS:-3}
tasks_per_step = 4
checkpoint_every = 0
[agents]
schemes = 2
samples = 2
turns = 2
max_new_tokens = 128
selection_max_new_tokens = 128
summary_max_new_tokens = 128
[rejection]
old_logprobs = "$old"
TOML
  rm -rf "$OUT/$old"
  "$VINCI" train rl --config "$OUT/$old.toml" --model tests/fixtures/llm/models/qwen2 \
    --chat-template tests/fixtures/llm/templates/qwen2_5.jinja --model-device cuda --tasks tasks --level 1 \
    --device cuda --trials 20 --out "$OUT/$old" >"$OUT/$old.txt" 2>"$OUT/$old.log"
  echo "old_logprobs = $old: exit $?"
done
python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print(f"{'old_logprobs':>12} {'step':>4} {'sequences':>9} {'MRS dropped':>11} {'dropped %':>9} {'|trainer - sampler|':>19}")
for old in ("sampler", "trainer"):
    f = out / old / "metrics.jsonl"
    if not f.exists():
        print(f"{old:>12}: no metrics"); continue
    for line in f.read_text().splitlines():
        r = json.loads(line)
        n = r["trained_samples"]
        print(f"{old:>12} {r['step']:>4} {n:>9} {r['mrs_rejected']:>11} {100 * r['mrs_rejected'] / max(n, 1):>8.1f}% {r['logprob_diff']:>19.4f}")
PY
