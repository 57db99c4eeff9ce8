#!/usr/bin/env bash
# The SFT data of issue 16 on a GPU: `vinci sft-data` runs the procedural teacher through the agents
# on a curriculum's training tasks with real Triton evaluation, then the script counts what the data
# holds (conversations by role, the strategies of the policy targets, the summaries' skills, the
# measured speedups), checking each line's shape against rl/sft_data.h's format. Exits 1 when no
# policy answer became a target.
# Usage (repository root): benchmarks/sft_data_gpu.sh OUT_DIR
# Environment: SEED (0), ELEMENTWISE (4), ROWWISE (4), MAX_TASKS (6), TURNS (3), SCHEMES (1), PARALLEL
# (8 tasks at once). The evaluation cache starts empty, so two runs compare fairly.
set -uo pipefail
OUT=${1:-sft-data-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI=$BUILD/src/cli/vinci
CACHE=/tmp/vinci-sft-data-cache
rm -rf "$OUT/cur" "$OUT/sft" "$CACHE"
$VINCI curriculum --out "$OUT/cur" --seed "${SEED:-0}" --elementwise "${ELEMENTWISE:-4}" --rowwise "${ROWWISE:-4}" \
  --heldout-share 0 || exit 1
start=$(date +%s)
VINCI_CACHE=$CACHE $VINCI sft-data --curriculum "$OUT/cur" --out "$OUT/sft" --device cuda --no-compile-baseline \
  --trials 30 --time-budget 2 --turns "${TURNS:-3}" --schemes "${SCHEMES:-1}" --samples 1 --max-tasks "${MAX_TASKS:-6}" \
  --parallel-tasks "${PARALLEL:-8}" \
  --seed "${SEED:-0}" >"$OUT/sft-data.log" 2>&1
rc=$?
echo "sft-data exit $rc in $(( $(date +%s) - start )) s"
tail -3 "$OUT/sft-data.log"
python3 - "$OUT/sft" <<'PY'
import collections, json, pathlib, re, sys
sft = pathlib.Path(sys.argv[1])
roles, strategies, skills, policy_turns = collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter()
for line in (sft / "sft.jsonl").read_text().splitlines():
    r = json.loads(line)
    assert r["messages"][-1]["role"] == "assistant" and r["meta"]["role"] in ("policy", "selection", "summary"), line[:200]
    roles[r["meta"]["role"]] += 1
    answer = r["messages"][-1]["content"]
    if r["meta"]["role"] == "policy":
        strategies[re.search(r"Strategy: ([^\n]*)", answer).group(1)] += 1
        policy_turns[sum(m["role"] == "assistant" for m in r["messages"]) - 1] += 1
    if r["meta"]["role"] == "summary":
        for s in json.loads(re.search(r"<tool_call>(.*)</tool_call>", answer, re.S).group(1))["arguments"]["new_skills"]:
            skills[s["name"]] += 1
results = collections.Counter()
speedups = []
for line in (sft / "episodes.jsonl").read_text().splitlines():
    for c in json.loads(line)["calls"]:
        if c["role"] == "policy" and c.get("result"):
            results[c["result"]["class"]] += 1
            if c["result"]["class"] == "correct" and c["result"].get("speedup_eager"):
                speedups.append(c["result"]["speedup_eager"])
print("conversations by role:", dict(roles))
print("policy targets by turn:", dict(sorted(policy_turns.items())))
print("policy results:", dict(results), f"speedups over eager: min {min(speedups, default=0):.2f} "
      f"median {sorted(speedups)[len(speedups) // 2] if speedups else 0:.2f} max {max(speedups, default=0):.2f}")
print("policy target strategies:")
for s, n in strategies.most_common():
    print(f"  {n:3d}  {s}")
print("summary skills:", dict(skills))
sys.exit(0 if roles["policy"] > 0 else 1)
PY
