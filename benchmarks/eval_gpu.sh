#!/usr/bin/env bash
# The evaluator on a GPU machine, before and after the judge/sandbox redesign (issue 14):
#   s  smoke: a few CUDA solutions through the new evaluator; the script stops when one is not correct
#   1  cold throughput, new: the 32 CUDA solutions with empty caches (32 nvcc builds, 32 baselines)
#   o  cold throughput, old: the same with the evaluator of the commit before the redesign, whose tree
#      is carried as .before (copied from `git worktree add` of that commit; not committed)
#   2  warm throughput, new: compile cache and baselines warm, results not reused
#   w  warm throughput, old
#   3  the corpora on CUDA, new: tests/hacks, tests/threats and tests/claims (both written out from
#      their templates), tests/adversarial, and KernelBench's three unit-test kernels, carried as
#      .kernelbench (their code stays out of the repository)
# Usage (repository root): benchmarks/eval_gpu.sh OUT_DIR [STAGES]   (default s1o2w3, in that order)
# Environment:
#   DEADLINE=S        seconds since start: a stage that would start after S-60 is skipped, and a
#                     running `vinci eval` stops at S-20 keeping what finished (the old one is killed)
#   SOLUTIONS=REGEX   narrows stages 1, o, 2 and w to the solutions whose task id matches
#   FRESH_CACHE=0     stages 1 and o keep the cache a previous call on the same warm machine left
#                     (a cold run split over calls by SOLUTIONS: what it evaluates is still uncached)
#   CORPORA="DIR ..." narrows stage 3 to those folders (and leaves out the containment corpus)
#   CORPUS_SCALE=F    stage 3 at --scale F (default 1)
#   WITH_SOLUTIONS="level1/4_Softmax ..."  honest solutions evaluated among stage 3's files,
#                     expected correct (one build step for all: nvcc runs 16 at once)
# Exits 1 when an eval fails (exit 3, the deadline, is not a failure), a file of stage 3 ends other
# than its label, or a solution is not correct; the summary is printed first either way.
# Stage 3 gathers the CUDA files of every corpus into one folder, so that their builds share one
# parallel build step; its results are corpus_mixed.jsonl/.txt, each file prefixed by its corpus.
set -uo pipefail
OUT=${1:-bench-out}
STAGES=${2:-s1o2w3}
START=$(date +%s)
DEADLINE=${DEADLINE:-100000}
want() { [[ $STAGES == *$1* ]] && (( $(date +%s) - START < DEADLINE - 60 )) || { [[ $STAGES == *$1* ]] && echo "stage $1 skipped: deadline"; return 1; }; }
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
OLD=""
if [[ $STAGES == *o* || $STAGES == *w* ]] && [ -d .before ]; then
  (cmake -S .before -B build-before -G Ninja -DCMAKE_BUILD_TYPE=Release -DVINCI_BUILD_TESTS=OFF \
     -DVINCI_BUILD_BENCHMARKS=OFF >"$OUT/cmake-before.log" 2>&1 &&
   cmake --build build-before -j "$(nproc)" --target vinci >>"$OUT/cmake-before.log" 2>&1) &
  OLD=$!
fi
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF
[ -n "$OLD" ] && { wait $OLD || { tail -20 "$OUT/cmake-before.log"; OLD=""; }; }
echo "build done at $(( $(date +%s) - START )) s"
NEW=$BUILD/src/cli/vinci
$BUILD/src/eval/vinci-sandbox --probe | tee "$OUT/sandbox.json"

FAILED=()  # what makes the script exit 1 at the end: an eval that failed, a solution not correct
# eval NAME BINARY CACHE ARGS...: one timed `vinci eval`, its seconds appended to throughput.txt
run_eval() {
  local name=$1 bin=$2 cache=$3; shift 3
  local s e left=$(( DEADLINE - 20 - ($(date +%s) - START) ))
  local stop=(timeout "$left")
  [ "$bin" = "$NEW" ] && { stop=(); set -- "$@" --deadline "$left"; }
  s=$(date +%s.%N)
  VINCI_CACHE=$cache "${stop[@]}" $bin eval "$@" -q --out "$OUT/$name.jsonl" >"$OUT/$name.txt" 2>&1
  local rc=$?
  e=$(date +%s.%N)
  # exit 3: stopped by the deadline, what finished is kept; a solutions run must be all correct
  (( rc == 0 || rc == 3 )) || FAILED+=("$name: vinci eval exited $rc (see $name.txt)")
  if [[ $name != corpus_* ]] && [ -s "$OUT/$name.jsonl" ]; then
    local wrong
    wrong=$(python3 -c 'import json,sys; print(sum(json.loads(l)["class"] != "correct" for l in open(sys.argv[1]) if l.strip()))' "$OUT/$name.jsonl")
    (( wrong == 0 )) || FAILED+=("$name: $wrong solution(s) not correct")
  fi
  echo "$name $(python3 -c "print($e - $s)")" >>"$OUT/throughput.txt"
  echo "$name: $(grep -cE . "$OUT/$name.jsonl" 2>/dev/null) results in $(python3 -c "print(round($e - $s))") s"
}
SOLUTIONS=(--tasks tasks --candidates tasks/solutions/cuda --device cuda --no-compile-baseline
           ${SOLUTIONS:+--filter "$SOLUTIONS"})

if want s; then
  run_eval smoke "$NEW" /tmp/vc-new "${SOLUTIONS[@]}" --no-cache --filter 'level1/(1_|4_|13_|17_)|level3/4_'
  grep -E "^  [a-z]" "$OUT/smoke.txt"
  if grep -qvE '"class": ?"correct"' "$OUT/smoke.jsonl"; then
    python3 benchmarks/summarize_results.py "$OUT"; exit 1
  fi
fi
if want 1; then
  [ "${FRESH_CACHE:-1}" = 0 ] || rm -rf /tmp/vc-new
  run_eval cold_new "$NEW" /tmp/vc-new "${SOLUTIONS[@]}"
fi
if want o && [ -n "$OLD" ]; then
  [ "${FRESH_CACHE:-1}" = 0 ] || rm -rf /tmp/vc-old
  VINCI_WORKER_PATH=$PWD/.before/python run_eval cold_old build-before/src/cli/vinci /tmp/vc-old "${SOLUTIONS[@]}"
fi
if want 2; then
  run_eval warm_new "$NEW" /tmp/vc-new "${SOLUTIONS[@]}" --no-cache
fi
if want w && [ -n "$OLD" ]; then
  VINCI_WORKER_PATH=$PWD/.before/python run_eval warm_old build-before/src/cli/vinci /tmp/vc-old "${SOLUTIONS[@]}" --no-cache
fi
if want 3; then
  MIX=/tmp/vinci-corpora && rm -rf $MIX && mkdir -p $MIX
  for corpus in ${CORPORA:-tests/hacks tests/threats tests/claims .kernelbench}; do
    name=$(basename "$corpus" | tr -d .)
    if compgen -G "$corpus/candidates/*.py.in" >/dev/null; then  # templates (tests/claims, tests/threats)
      python3 scripts/materialize_corpus.py "$corpus" "/tmp/$name-corpus" --suite tasks >/dev/null || exit 1
      corpus=/tmp/$name-corpus/candidates
    fi
    for f in $(grep -l '^# vinci-devices:.*cuda' "$corpus"/*.py); do
      cp "$f" "$MIX/${name}__$(basename "$f")"
    done
  done
  for id in ${WITH_SOLUTIONS:-}; do
    { printf '# vinci-task: %s\n# vinci-expect: correct/\n# vinci-devices: cuda\n' "$id"
      cat "tasks/solutions/cuda/$id.py"; } >"$MIX/solution__${id//\//_}.py"
  done
  run_eval corpus_mixed "$NEW" /tmp/vc-corpora --tasks tasks --candidates $MIX --device cuda --expect \
    --no-compile-baseline --no-cache --run-timeout 60 --scale "${CORPUS_SCALE:-1}"
  [ -z "${CORPORA:-}" ] && run_eval corpus_adversarial "$NEW" /tmp/vc-corpora --tasks tests/adversarial/tasks \
    --candidates tests/adversarial/candidates --device cuda --expect --no-compile-baseline --no-cache --run-timeout 60
fi
python3 benchmarks/summarize_results.py "$OUT"
if (( ${#FAILED[@]} )); then
  printf 'FAILED: %s\n' "${FAILED[@]}"
  exit 1
fi
