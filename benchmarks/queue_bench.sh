#!/usr/bin/env bash
# Evaluation through the Redis queue (issue 37, docs/distributed.md) against a local run: the same jobs,
# first by a local `vinci eval` (which also warms the build cache and the baselines), then served by
# one worker on one GPU (one CPU slot), then by one worker on two GPUs (two CPU slots), each against a
# fresh result store (a database of its own) with the builds and baselines warm. Prints jobs a minute
# for each and whether their verdicts agree with the local run's, pair by pair.
# Usage (repository root): benchmarks/queue_bench.sh OUT_DIR
# Environment:
#   DEVICE=cuda|cpu   cuda (default): on the GPU machine, vinci built here in $BUILD (build-gpu), the
#                     17 level-1 CUDA solutions; cpu: vinci already built in $BUILD (build), the CPU
#                     solutions at --scale 0.05 with the tests' timing, slots of one CPU each
#   SOLUTIONS=REGEX   narrows the solutions (default level1/)
#   WARM=1            a warm machine's cache from an earlier call is used as it is (no local run)
# The runs' files are also packed into OUT/runs.tgz after each run (a GPU call brings back 8 files).
#   HOLD0=1           then one GPU (slot) again with --hold-ahead 0: what holding the next job ahead,
#                     built while the current one is timed, is worth
# On the GPU machine it needs .device-deps from ../shared/device/fetch-debs.sh with
#   EXTRA_DEBS="bubblewrap libseccomp-dev libhiredis-dev libhiredis0.14 redis-server redis-tools libjemalloc2 liblzf1"
set -uo pipefail
OUT=${1:-bench-out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
START=$(date +%s)
ROOT=/tmp/device-deps-root
L=/usr/lib/x86_64-linux-gnu
if [ "$DEVICE" = cuda ]; then
  BUILD=${BUILD:-build-gpu}
  source benchmarks/gpu_host_setup.sh
  cp -n $ROOT$L/libhiredis.so* $L/ 2>/dev/null
  gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
  echo "build done at $(( $(date +%s) - START )) s"
  PAIRS=(--tasks tasks --candidates tasks/solutions/cuda --device cuda)
  SERVE=(--device cuda --gpus)
  ONE=0 TWO=0,1
else
  BUILD=${BUILD:-build}
  PAIRS=(--tasks tasks --candidates tasks/solutions/cpu --device cpu --scale 0.05 --trials 10)
  SERVE=(--device cpu --slots)
  ONE=1 TWO=2
fi
PAIRS+=(--no-compile-baseline --filter "${SOLUTIONS:-level1/}")
VINCI=$BUILD/src/cli/vinci
export VINCI_CACHE=${VINCI_CACHE:-/tmp/vq-cache}

# The Debian server (on the GPU machine out of .device-deps, its libraries beside it), localhost only,
# behind a password.
PORT=6391
PASSWORD=queue-bench
DATA=$(mktemp -d)
REDIS=(redis-server) CLI=(redis-cli)
[ -x $ROOT/usr/bin/redis-server ] && REDIS=(env LD_LIBRARY_PATH=$ROOT$L $ROOT/usr/bin/redis-server) &&
  CLI=(env LD_LIBRARY_PATH=$ROOT$L $ROOT/usr/bin/redis-cli)
"${REDIS[@]}" --port $PORT --bind 127.0.0.1 --dir "$DATA" \
  --requirepass $PASSWORD --save '' --appendonly no --daemonize yes --logfile "$OUT/redis.log" ||
  { echo "redis-server did not start"; exit 1; }
URL=redis://:$PASSWORD@127.0.0.1:$PORT

timed() {  # NAME COMMAND...: runs it, its seconds appended to throughput.txt
  local name=$1 s e; shift
  s=$(date +%s.%N)
  "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  e=$(date +%s.%N)
  echo "$name $(python3 -c "print(round($e - $s, 1))") rc=$rc" | tee -a "$OUT/throughput.txt"
}

# WARM=1: a warm machine's cache and warm-up results from an earlier call are used as they are.
[ "${WARM:-0}" = 1 ] && [ -d "$VINCI_CACHE/baselines" ] || timed warmup "$VINCI" eval "${PAIRS[@]}" -q --out "$OUT/warmup.jsonl"
# serve DB UNITS: a worker on those GPUs (that many CPU slots), the pairs submitted to it, the worker
# stopped after.
serve() {
  local db=$1 units=$2
  shift 2
  # The workers' own result cache would answer every pair the warm-up judged: only builds and
  # baselines stay warm.
  rm -rf "$VINCI_CACHE/results"
  "$VINCI" worker --queue "$URL/$db" "${SERVE[@]}" "$units" --name "bench$db" "$@" >"$OUT/worker$db.txt" 2>&1 &
  local worker=$!
  timed "queue$db" "$VINCI" eval --queue "$URL/$db" "${PAIRS[@]}" -q --out "$OUT/queue$db.jsonl"
  "$VINCI" worker --status --queue "$URL/$db" >"$OUT/status$db.txt" 2>&1
  kill -TERM $worker
  wait $worker
  # One file that comes back from a GPU call (which brings 8 at most), made again after every run, so
  # a call that reaches its limit still returns what finished.
  tar czf "$OUT/runs.tgz" -C "$OUT" $(cd "$OUT" && ls *.txt *.jsonl 2>/dev/null)
}
# A first queue run warms what the local run did not (session 31: the first of three took 58 s more
# than the third on one GPU), and is not counted.
serve 4 $TWO
serve 1 $ONE
[ "${HOLD0:-0}" = 1 ] && serve 3 $ONE --hold-ahead 0
serve 2 $TWO
"${CLI[@]}" -p $PORT -a $PASSWORD --no-auth-warning shutdown nosave >/dev/null 2>&1

python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
def verdicts(name):
    rows = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if l.strip()]
    return {(r["task"], r.get("candidate", "")): f'{r["class"]}/{r.get("reason", "")}' for r in rows}
seconds = {l.split()[0]: float(l.split()[1]) for l in open(f"{out}/throughput.txt")}
runs = {"warmup": "local, cold builds", "queue1": "queue, one GPU (CPU slot)", "queue2": "queue, two GPUs (CPU slots)",
        "queue3": "queue, one GPU (CPU slot), --hold-ahead 0"}
times = {name: seconds.get(name) for name in runs}
runs = {name: what for name, what in runs.items() if times[name] is not None}  # WARM=1: no warm-up; HOLD0
base = verdicts(next(iter(runs)))
print("| run | jobs | correct | wall s | jobs a minute | verdicts as the local run |")
print("|---|---|---|---|---|---|")
for name, what in runs.items():
    v = verdicts(name)
    same = sum(v.get(k) == base[k] for k in base)
    correct = sum(x.startswith("correct/") for x in v.values())
    print(f"| {what} | {len(v)} | {correct} | {times[name]:.1f} | {60 * len(v) / times[name]:.1f} | {same} of {len(base)} |")
print(f"two against one: {times['queue1'] / times['queue2']:.2f}x")
if "queue3" in runs:
    print(f"one job held ahead against none, one GPU: {times['queue3'] / times['queue1']:.2f}x")
EOF
