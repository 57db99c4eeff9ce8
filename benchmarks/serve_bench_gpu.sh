#!/usr/bin/env bash
# Serving under load (issue 17, item 4): `vinci serve` against `transformers serve` on the same GPU,
# model and requests, in one call. The model: a random-weight Qwen2.5-0.5B shape (24 layers, hidden
# 896) in bf16, written by `vinci init-model` with the fixture's tokenizer and a ChatML template. The
# load: 32 concurrent clients, each sending 2 streamed chat requests with mixed prompt lengths
# (about 50 to 1000 tokens) and answer lengths (32 to 256 new tokens, sampled at temperature 1, so
# random weights stop wherever they stop: throughput counts the tokens each server actually made,
# re-tokenized by the same tokenizer). Reported: requests/s, completion tokens/s, p50/p99 latency and
# time to the first content chunk. transformers serve needs fastapi, uvicorn, pydantic,
# opentelemetry-api and openai (with httpx2), carried as wheels in .device-deps/wheels; the clients are
# plain urllib.
# Usage (repository root): benchmarks/serve_bench_gpu.sh [OUT_DIR]
#   PEERS="plain cb" (the default) runs transformers serve both without and with its continuous
#   batching; PEERS=cb only with (the plain one takes ~4 minutes of the call).
#   VARIANTS="label=args;label=args" adds vinci servers started with extra arguments (ablations),
#   e.g. VARIANTS="no graphs=--no-cuda-graphs;whole prompts=--prefill-chunk 0".
set -uo pipefail
OUT=${1:-serve-bench-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci
VINCI="$BUILD/src/cli/vinci"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device-deps/wheels/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site

TOK=/tmp/serve-bench-tok MODEL=/tmp/serve-bench-model
rm -rf $TOK $MODEL && mkdir -p $TOK
cp tests/fixtures/llm/models/qwen2/tokenizer.json tests/fixtures/llm/models/qwen2/tokenizer_config.json $TOK/
cp tests/fixtures/llm/templates/qwen2_5.jinja $TOK/chat_template.jinja
cat > /tmp/serve-bench-config.json <<'JSON'
{"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
 "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
 "rms_norm_eps": 1e-06, "tie_word_embeddings": true, "use_sliding_window": false, "hidden_act": "silu"}
JSON
"$VINCI" init-model --config /tmp/serve-bench-config.json --tokenizer $TOK --out $MODEL --dtype bfloat16 \
  --max-shard-mib 2048 | head -1

"$VINCI" serve --model $MODEL --device cuda --served-model-name bench --port 8130 --max-batch 64 \
  >"$OUT/vinci-serve.txt" 2>"$OUT/vinci-serve.log" &
vinci_pid=$!
PEERS=${PEERS:-plain cb}
variant_pids=() variant_list=""
port=8140
IFS=';' read -ra variants <<<"${VARIANTS:-}"
for v in "${variants[@]}"; do
  [ -z "$v" ] && continue
  # shellcheck disable=SC2086  # the arguments are meant to split
  "$VINCI" serve --model $MODEL --device cuda --served-model-name bench --port $port --max-batch 64 ${v#*=} \
    >"$OUT/vinci-serve-$port.txt" 2>"$OUT/vinci-serve-$port.log" &
  variant_pids+=($!)
  variant_list+="${v%%=*}=$port;"
  port=$((port + 1))
done
hf_pid=
if [[ " $PEERS " == *" plain "* ]]; then
  transformers serve $MODEL --port 8131 --host 127.0.0.1 --device cuda:0 --dtype bfloat16 \
    >"$OUT/transformers-serve.log" 2>&1 &
  hf_pid=$!
fi
# transformers serve's own continuous batching, where this version has it.
CB_FLAG=$(transformers serve --help 2>&1 | grep -o -- '--continuous[-_]batching' | head -1)
cb_pid=
if [ -n "$CB_FLAG" ] && [[ " $PEERS " == *" cb "* ]]; then
  transformers serve $MODEL --port 8132 --host 127.0.0.1 --device cuda:0 --dtype bfloat16 $CB_FLAG \
    >"$OUT/transformers-serve-cb.log" 2>&1 &
  cb_pid=$!
fi
variants_up() {
  local p
  for p in $(seq 8140 $((port - 1))); do curl -sf http://127.0.0.1:$p/health >/dev/null || return 1; done
}
for _ in $(seq 180); do
  curl -sf http://127.0.0.1:8130/health >/dev/null &&
    { [ -z "$hf_pid" ] || curl -sf http://127.0.0.1:8131/v1/models >/dev/null; } &&
    { [ -z "$cb_pid" ] || curl -sf http://127.0.0.1:8132/v1/models >/dev/null; } && variants_up && break
  sleep 1
done

python3 - "$MODEL" "$OUT" "${hf_pid:+8131}" "${cb_pid:+8132}" "$variant_list" <<'PY'
import concurrent.futures, json, random, statistics, sys, time, urllib.request
from tokenizers import Tokenizer

model_dir, out, plain_port, cb_port, variant_list = sys.argv[1:6]
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
rng = random.Random(0)
words = "tensor kernel block warp fused memory bandwidth latency softmax reduce row column tile shared".split()
jobs = []
for client in range(32):
    for k in range(2):
        n_words = rng.choice([40, 150, 400, 800])
        jobs.append((client, [{"role": "user", "content": " ".join(rng.choice(words) for _ in range(n_words))}],
                     rng.choice([32, 64, 128, 256])))

def one(base, name, messages, max_tokens):
    """One streamed chat request, read as server-sent events: (latency, time to first content, tokens)."""
    body = json.dumps({"model": name, "messages": messages, "max_tokens": max_tokens, "temperature": 1.0,
                       "stream": True}).encode()
    request = urllib.request.Request(base + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    first = None
    text = ""
    with urllib.request.urlopen(request, timeout=600) as response:
        for raw in response:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            for c in json.loads(line[5:]).get("choices", []):
                piece = (c.get("delta") or {}).get("content")
                if piece:
                    first = first or time.perf_counter()
                    text += piece
    end = time.perf_counter()
    return end - start, (first or end) - start, len(tok.encode(text, add_special_tokens=False).ids)

def run(base, name):
    one(base, name, jobs[0][1], 8)  # warm-up (transformers serve loads the model on first use)
    by_client = {}
    for c, m, t in jobs:
        by_client.setdefault(c, []).append((m, t))
    start = time.perf_counter()
    def client_loop(reqs):
        return [one(base, name, m, t) for m, t in reqs]
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        results = [r for rs in pool.map(client_loop, by_client.values()) for r in rs]
    wall = time.perf_counter() - start
    lat = sorted(r[0] for r in results)
    ttft = sorted(r[1] for r in results)
    tokens = sum(r[2] for r in results)
    pct = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]
    return {"requests": len(results), "wall_s": wall, "req_per_s": len(results) / wall, "tokens": tokens,
            "tokens_per_s": tokens / wall, "p50_s": pct(lat, 0.5), "p99_s": pct(lat, 0.99),
            "ttft_p50_s": pct(ttft, 0.5), "ttft_p99_s": pct(ttft, 0.99)}

rows = {}
servers = [("vinci serve", "http://127.0.0.1:8130/v1", "bench")]
for item in filter(None, variant_list.split(";")):
    label, port = item.rsplit("=", 1)
    servers.append((f"vinci {label}", f"http://127.0.0.1:{port}/v1", "bench"))
if plain_port:
    servers.append(("transformers serve", f"http://127.0.0.1:{plain_port}/v1", model_dir))
if cb_port:
    servers.append(("transformers serve CB", f"http://127.0.0.1:{cb_port}/v1", model_dir))
for label, base, name in servers:
    try:
        rows[label] = run(base, name)
    except Exception as e:
        print(f"{label}: failed: {type(e).__name__}: {e}")
    json.dump(rows, open(f"{out}/serve_bench.json", "w"), indent=2)  # after each: a timeout keeps the rest
print(f"{'server':>21} {'requests':>8} {'wall s':>7} {'req/s':>6} {'tokens':>7} {'tok/s':>7} {'p50 s':>6} {'p99 s':>6} {'TTFT p50':>8} {'TTFT p99':>8}")
for label, r in rows.items():
    print(f"{label:>21} {r['requests']:>8} {r['wall_s']:>7.1f} {r['req_per_s']:>6.2f} {r['tokens']:>7} {r['tokens_per_s']:>7.0f} "
          f"{r['p50_s']:>6.2f} {r['p99_s']:>6.2f} {r['ttft_p50_s']:>8.2f} {r['ttft_p99_s']:>8.2f}")
PY
kill $vinci_pid $hf_pid $cb_pid "${variant_pids[@]}" 2>/dev/null
wait 2>/dev/null
echo "transformers serve continuous-batching flag: ${CB_FLAG:-none in this version}"
grep -E "done:" "$OUT/vinci-serve.log" | awk '{for(i=1;i<=NF;i++) if($i=="of") b[$(i+1)]++} END {printf "vinci serve, batch each request joined:"; for(k in b) printf " %s×%d", k, b[k]; print ""}'
tail -3 "$OUT/transformers-serve.log"
[ -n "$cb_pid" ] && tail -3 "$OUT/transformers-serve-cb.log"
