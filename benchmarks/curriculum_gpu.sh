#!/usr/bin/env bash
# The curriculum and its teacher on a GPU (issue 16): a small curriculum, the teacher's Triton
# solutions of every task in every strategy, all evaluated in one `vinci eval` run; then a table by
# strategy (correct, geomean and median speedup over eager). The wrong strategies (wrong_op,
# off_by_one) must all be refused and every other one correct; the script exits 1 otherwise.
# Usage (repository root): benchmarks/curriculum_gpu.sh OUT_DIR
# Environment: SEED (0), ELEMENTWISE (4), ROWWISE (4) tasks; DEADLINE (seconds for the eval, 420).
set -uo pipefail
OUT=${1:-curriculum-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
VINCI=$BUILD/src/cli/vinci
rm -rf "$OUT/cur" "$OUT/sols" /tmp/vinci-teacher-mix
$VINCI curriculum --out "$OUT/cur" --seed "${SEED:-0}" --elementwise "${ELEMENTWISE:-4}" --rowwise "${ROWWISE:-4}" \
  --heldout-share 0 || exit 1
$VINCI teach --curriculum "$OUT/cur" --out "$OUT/sols" || exit 1
MIX=/tmp/vinci-teacher-mix && mkdir -p $MIX
python3 - "$OUT/sols" "$MIX" <<'PY'
import json, pathlib, sys
sols, mix = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for line in (sols / "teacher.jsonl").read_text().splitlines():
    e = json.loads(line)
    name = f"{e['strategy']}__{e['id'].replace('/', '_')}.py"
    (mix / name).write_text(f"# vinci-task: {e['id']}\n" + (sols / e["file"]).read_text())
PY
VINCI_CACHE=/tmp/vc-teacher $VINCI eval --tasks "$OUT/cur/train" --candidates $MIX --device cuda --no-compile-baseline \
  --no-cache --trials 50 --time-budget 3 --deadline "${DEADLINE:-420}" -q --out "$OUT/teacher.jsonl" >"$OUT/eval.txt" 2>&1
echo "eval exit $?"
python3 - "$OUT/teacher.jsonl" <<'PY'
import json, math, statistics, sys
rows = {}
bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    strategy = r["candidate"].rsplit("/", 1)[-1].split("__")[0]
    rows.setdefault(strategy, []).append(r)
    wrong = strategy in ("wrong_op", "off_by_one")
    if wrong == (r["class"] == "correct"):
        bad.append(f"{strategy} {r['task']}: {r['class']}/{r.get('reason')}")
print(f"{'strategy':16s} {'n':>3s} {'correct':>7s} {'geomean':>8s} {'median':>7s}  classes")
for s, rs in sorted(rows.items()):
    sp = [r["speedup_eager"] for r in rs if r["class"] == "correct" and r.get("speedup_eager")]
    geo = math.exp(statistics.fmean(math.log(x) for x in sp)) if sp else float("nan")
    med = statistics.median(sp) if sp else float("nan")
    classes = sorted({f"{r['class']}/{r.get('reason') or ''}" for r in rs})
    print(f"{s:16s} {len(rs):3d} {sum(r['class'] == 'correct' for r in rs):7d} {geo:8.3f} {med:7.3f}  {', '.join(classes)}")
print("by task (speedup over eager, correct strategies):")
tasks = sorted({r["task"] for rs in rows.values() for r in rs})
for t in tasks:
    cells = [f"{s}={r['speedup_eager']:.2f}" for s, rs in sorted(rows.items()) for r in rs
             if r["task"] == t and r["class"] == "correct" and r.get("speedup_eager")]
    print(f"  {t:40s} {' '.join(cells)}")
for b in bad:
    print("UNEXPECTED:", b)
sys.exit(1 if bad else 0)
PY
