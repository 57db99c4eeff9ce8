#!/usr/bin/env bash
# `vinci serve` on a GPU machine: the tiny random Qwen2 fixture served from CUDA.
# 1. Batching of concurrent clients: the same 16 requests (64 new tokens each, ignore_eos) sent one
#    at a time and then all at once; the server's log says how it batched them.
# 2. `vinci optimize --llm` against it, with the evaluator on CUDA: the whole agent loop through the
#    HTTP path, every call token-exact (vinci serve returns vLLM's token ids), so every call trainable.
#    The answers of random weights are nil, as expected.
# 3. `vinci bench-model --llm` against it on four level-1 tasks: the suite path, batched.
# The fixture's config says 512 positions, and the agents' prompts run to thousands of tokens:
# --max-model-len lifts the limit (rope extends; the weights are random anyway).
# Usage (repository root): benchmarks/serve_gpu.sh [OUT_DIR]
set -uo pipefail
OUT=${1:-bench-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build vinci
VINCI="$BUILD/src/cli/vinci"
MODEL=tests/fixtures/llm/models/qwen2
TEMPLATE=tests/fixtures/llm/templates/qwen2_5.jinja

"$VINCI" serve --model $MODEL --chat-template $TEMPLATE --device cuda --served-model-name tiny-qwen2 --port 8124 \
  --max-model-len 16384 >"$OUT/serve.txt" 2>"$OUT/serve.log" &
server=$!
for _ in $(seq 120); do grep -q "http://" "$OUT/serve.txt" 2>/dev/null && break; sleep 1; done
cat "$OUT/serve.txt"

echo "== batching: 16 chat requests, 64 new tokens each, one at a time and all at once"
python3 - <<'PY' | tee "$OUT/batching.txt"
import concurrent.futures, json, time, urllib.request
URL = "http://127.0.0.1:8124/v1/chat/completions"
def ask(k):
    body = {"model": "tiny-qwen2", "messages": [{"role": "user", "content": f"kernel {k}: add two vectors"}],
            "max_tokens": 64, "ignore_eos": True, "temperature": 0, "return_token_ids": True}
    req = urllib.request.Request(URL, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=600).read())["choices"][0]["token_ids"]
ask(99)  # warm-up
t = time.perf_counter(); solo = [ask(k) for k in range(16)]; t_solo = time.perf_counter() - t
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    t = time.perf_counter(); together = list(pool.map(ask, range(16))); t_all = time.perf_counter() - t
tokens = sum(map(len, solo))
print(f"one at a time: {tokens} tokens in {t_solo:.2f} s = {tokens / t_solo:.0f} tokens/s")
print(f"all at once:   {sum(map(len, together))} tokens in {t_all:.2f} s = {sum(map(len, together)) / t_all:.0f} tokens/s")
print(f"greedy answers identical batched and alone: {together == solo}")
PY
grep "batch:" "$OUT/serve.log" | tail -3

echo "== vinci optimize --llm against vinci serve, evaluator on cuda"
rm -f "$OUT/skills-serve.db"
"$VINCI" skills --db "$OUT/skills-serve.db" import skills/seed.jsonl >/dev/null
rm -rf "$OUT/optimize-serve"
start=$(date +%s.%N)
"$VINCI" optimize tasks/level1/13_ReLU.py --llm http://127.0.0.1:8124/v1 --model-name tiny-qwen2 --device cuda \
  --skills "$OUT/skills-serve.db" --schemes 2 --samples 2 --turns 2 --max-new-tokens 128 --trials 20 \
  --out "$OUT/optimize-serve" >"$OUT/optimize-serve.txt" 2>"$OUT/optimize-serve.log"
rc=$?
end=$(date +%s.%N)
cat "$OUT/optimize-serve.txt"; tail -8 "$OUT/optimize-serve.log"
python3 benchmarks/episode_summary.py "$OUT/optimize-serve" "$rc" "$start" "$end"
grep "batch:" "$OUT/serve.log" | tail -3

echo "== vinci bench-model --llm against vinci serve: 4 level-1 tasks x 4 samples, evaluator on cuda"
rm -rf "$OUT/bench-serve"
start=$(date +%s.%N)
"$VINCI" bench-model --tasks tasks --level 1 --filter '^level1/1[0-3]_' --llm http://127.0.0.1:8124/v1 \
  --model-name tiny-qwen2 --samples 4 --max-new-tokens 128 --device cuda --trials 20 \
  --out "$OUT/bench-serve" >"$OUT/bench-serve.txt" 2>"$OUT/bench-serve.log"
echo "exit $?; $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s wall"
tail -12 "$OUT/bench-serve.txt"
grep "batch:" "$OUT/serve.log" | tail -2
kill -TERM $server; wait $server; echo "vinci serve exited $? on SIGTERM"
