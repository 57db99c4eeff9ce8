#!/usr/bin/env bash
# `vinci optimize` on a GPU machine with the native backbone: a tiny random fixture checkpoint writes
# the answers on CUDA (their quality is nil, as expected of random weights; the fixture has no chat
# template of its own, so it gets Qwen2.5's), with the evaluator set to the GPU. Proves that
# selection -> policy turns -> episode works with the model on CUDA.
# Then the whole loop with the evaluator on CUDA: `--llm` against benchmarks/scripted_llm_server.py,
# which answers a slow then a fast version of the CUDA solution for 11_ElementwiseChain, and a skill
# for the summary agent to propose, so that selection -> policy -> summary -> verifier -> admission
# all run on measured GPU speedups.
# Usage (repository root): benchmarks/optimize_gpu.sh [OUT_DIR]
set -uo pipefail
OUT=${1:-bench-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build vinci
VINCI="$BUILD/src/cli/vinci"
rm -f "$OUT/skills.db"
"$VINCI" skills --db "$OUT/skills.db" import skills/seed.jsonl
cp "$OUT/skills.db" "$OUT/skills-scripted.db"

echo "== vinci optimize, native backbone on cuda (tiny random Qwen2), evaluator on cuda"
rm -rf "$OUT/optimize-native"
start=$(date +%s.%N)
"$VINCI" optimize tasks/level1/13_ReLU.py --model tests/fixtures/llm/models/qwen2 --chat-template tests/fixtures/llm/templates/qwen2_5.jinja --model-device cuda --device cuda \
  --skills "$OUT/skills.db" --schemes 2 --samples 2 --turns 2 --max-new-tokens 128 --trials 20 \
  --out "$OUT/optimize-native" >"$OUT/optimize-native.txt" 2>"$OUT/optimize-native.log"
rc=$?
end=$(date +%s.%N)
cat "$OUT/optimize-native.txt"; tail -15 "$OUT/optimize-native.log"
python3 benchmarks/episode_summary.py "$OUT/optimize-native" "$rc" "$start" "$end"

echo "== vinci optimize --llm (scripted server), evaluator on cuda"
python3 benchmarks/scripted_llm_server.py --port 8123 --solution tasks/solutions/cuda/level1/11_ElementwiseChain.py &
server=$!
sleep 2
rm -rf "$OUT/optimize-scripted"
start=$(date +%s.%N)
"$VINCI" optimize tasks/level1/11_ElementwiseChain.py --llm http://127.0.0.1:8123/v1 --model-name scripted --device cuda \
  --skills "$OUT/skills-scripted.db" --schemes 1 --samples 1 --turns 2 \
  --out "$OUT/optimize-scripted" >"$OUT/optimize-scripted.txt" 2>"$OUT/optimize-scripted.log"
rc=$?
end=$(date +%s.%N)
kill $server
cat "$OUT/optimize-scripted.txt"; grep -E "scheme|turn|verify|summary|library|s[0-9]_r" "$OUT/optimize-scripted.log" | tail -20
echo "exit $rc; $(python3 -c "print(f'{$end - $start:.1f}')") s wall"
"$VINCI" skills --db "$OUT/skills-scripted.db" show fuse_elementwise_chain_single_launch | grep -E "^verified|status"
