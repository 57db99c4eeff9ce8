#!/usr/bin/env bash
# Issue 16's timing noise, separated (benchmarks/timing_noise.py): each task's eager Model and saved
# candidate timed in fresh processes, two a condition:
#   idle     nothing else on the host;
#   loaded   one C++ build a core at nice 10 beside it, as the bench's builds are (build.py);
#   pinned   the same builds under SCHED_IDLE on every core but 0, the timing process alone on core 0.
# Usage (repository root): benchmarks/timing_noise.sh DIR OUT_DIR   (DIR holds NAME.task.py and NAME.cand.py)
set -uo pipefail
DIR=$1 OUT=$2
mkdir -p "$OUT"
CORES=$(nproc)
cat >/tmp/load.cpp <<'CPP'
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>
int main() { std::map<std::string, std::vector<std::regex>> m; std::mt19937 g; std::cout << m.size() << g() << "\n"; }
CPP
load() {  # $1: the command prefix each build runs under, $2: first core
  for ((c = $2; c < CORES; c++)); do
    (while :; do taskset -c $c $1 g++ -O2 -c /tmp/load.cpp -o /tmp/load.$c.o 2>/dev/null; done) &
  done
}
stop() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; pkill -f load.cpp; sleep 1; }
for cond in idle loaded pinned; do
  case $cond in
    loaded) load "nice -n 10" 0; PREFIX="" ;;
    pinned) load "chrt -i 0" 1; PREFIX="taskset -c 0" ;;
    *) PREFIX="" ;;
  esac
  sleep 2
  for rep in 1 2; do
    for t in "$DIR"/*.task.py; do
      name=$(basename "$t" .task.py)
      $PREFIX python3 benchmarks/timing_noise.py "$t" "$DIR/$name.cand.py" | sed "s/^{/{\"cond\": \"$cond\", \"rep\": $rep, /" >>"$OUT/noise.jsonl"
    done
  done
  stop
done
python3 - "$OUT/noise.jsonl" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'task':<32} {'cond':<7} {'rep':>3}  {'eager judge ms':>16} {'cand judge ms':>16} {'speedup':>8}  {'eager gpu':>9} {'cand gpu':>9} {'gpu spd':>7}  {'eager host us':>13} {'cand host us':>12}")
for r in rows:
    e, c = r["eager"], r["candidate"]
    med = lambda bs, k: statistics.median(b[k] for b in bs)
    rng = lambda bs, k: "/".join(f"{b[k]:.3f}" for b in bs)
    print(f"{r['task'][:32]:<32} {r['cond']:<7} {r['rep']:>3}  {rng(e,'judge_ms'):>16} {rng(c,'judge_ms'):>16} "
          f"{med(e,'judge_ms')/med(c,'judge_ms'):>8.2f}  {med(e,'gpu_ms'):>9.3f} {med(c,'gpu_ms'):>9.3f} "
          f"{med(e,'gpu_ms')/med(c,'gpu_ms'):>7.2f}  {med(e,'host_us'):>13.0f} {med(c,'host_us'):>12.0f}")
PY
