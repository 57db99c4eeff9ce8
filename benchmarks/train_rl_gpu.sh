#!/usr/bin/env bash
# A short co-evolution run on the GPU machine: `vinci train rl` with the tiny random Qwen2 fixture on
# CUDA over level 1 of our task suite, kernels evaluated on CUDA, then `vinci plot` of its metrics.
# Random weights write no kernel, so rewards are 0 and nothing is summarised; what this shows is
# every stage of the step running on the GPU and the metrics file it leaves. Then the stages that
# need a working model: Coevolution.* (tests/train/coevolution_test.cpp) on CUDA, the fixture model
# trained in bf16 on scripted answers that carry a CUDA solution's kernel, slow at turn 1 and fast
# at turn 2, so the summary, the verifier and admission run too.
# Usage (repository root): benchmarks/train_rl_gpu.sh [OUT_DIR]
set -uo pipefail
OUT=${1:-bench-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build vinci vinci_llm_tests
VINCI="$BUILD/src/cli/vinci"
cat > "$OUT/rl.toml" <<'TOML'
[run]
steps = 3
tasks_per_step = 4
checkpoint_every = 1
[agents]
schemes = 2
samples = 2
turns = 2
max_new_tokens = 128
selection_max_new_tokens = 128
summary_max_new_tokens = 128
[optimizer]
lr = 1e-4
TOML
rm -rf "$OUT/rl"
start=$(date +%s.%N)
"$VINCI" train rl --config "$OUT/rl.toml" --model tests/fixtures/llm/models/qwen2 \
  --chat-template tests/fixtures/llm/templates/qwen2_5.jinja --model-device cuda --tasks tasks --level 1 \
  --device cuda --trials 20 --out "$OUT/rl" >"$OUT/rl.txt" 2>"$OUT/rl.log"
rc=$?
echo "exit $rc; $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s wall"
grep -E "^info: step [0-9]+:|loading|co-evolution" "$OUT/rl.log" | tail -6
"$VINCI" plot "$OUT/rl/metrics.jsonl" --out "$OUT/rl_metrics.svg"
python3 - "$OUT/rl" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
print(f"{'step':>4} {'samples':>7} {'reward':>7} {'loss':>8} {'grad':>8} {'lp diff':>8} {'tokens':>7} {'gen s':>6} {'eval s':>6} {'train s':>7} {'library':>7}")
for r in rows:
    print(f"{r['step']:>4} {r['trained_samples']:>7} {r['reward_mean_policy']:>7.3f} {r['pg_loss']:>8.4f} {r['grad_norm']:>8.3g} "
          f"{r['logprob_diff']:>8.2g} {r['train_tokens']:>7} {r['generate_s']:>6.1f} {r['evaluate_s']:>6.1f} {r['train_s']:>7.2f} {r['library_size']:>7}")
roles = {}
for f in sorted((out / "episodes").glob("*.jsonl")):
    for line in f.read_text().splitlines():
        for c in json.loads(line)["calls"]:
            roles[c["role"]] = roles.get(c["role"], 0) + 1
print("calls by role over the run:", roles, "| checkpoints:", sorted(p.name for p in (out / "checkpoints").iterdir()))
PY

echo "== every stage, scripted answers with CUDA kernels (Coevolution.*)"
start=$(date +%s.%N)
VINCI_TEST_CACHE=/tmp/vinci-test-cache VINCI_COEVOLUTION_SOLUTION=tasks/solutions/cuda/level1/11_ElementwiseChain.py \
  "$BUILD/tests/vinci_llm_tests" --gtest_filter='Coevolution.*' >"$OUT/coevolution.log" 2>&1
echo "exit $?; $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s wall"
grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/coevolution.log"
python3 - "$OUT/coevolution.log" <<'PY'
import json, sys
rows = [json.loads(l.split("metrics: ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("metrics: ")]
print(f"{'step':>4} {'fast_1':>6} {'reward':>7} {'proposed':>8} {'verified':>8} {'admitted':>8} {'library':>7} {'grad':>8} {'entropy':>7} {'gen s':>6} {'eval s':>6} {'train s':>7}")
for r in rows:
    print(f"{r['step']:>4} {r['fast_1']:>6.2f} {r['reward_mean_policy']:>7.3f} {r['skills_proposed']:>8} {r['skills_verified']:>8} "
          f"{r['skills_admitted']:>8} {r['library_size']:>7} {r['grad_norm']:>8.3g} {r['entropy']:>7.2f} {r['generate_s']:>6.1f} "
          f"{r['evaluate_s']:>6.1f} {r['train_s']:>7.2f}")
PY
