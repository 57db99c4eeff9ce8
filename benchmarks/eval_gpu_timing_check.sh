set -uo pipefail
OUT=${OUT:-/tmp/out}; BUILD=build-gpu
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF
MIX=/tmp/mix; rm -rf $MIX; mkdir -p $MIX
python3 scripts/materialize_corpus.py tests/threats /tmp/threats-corpus --suite tasks >/dev/null || exit 1
python3 scripts/materialize_corpus.py tests/hacks /tmp/hacks-corpus --suite tasks >/dev/null || exit 1
cp /tmp/hacks-corpus/candidates/side_stream_*.py /tmp/threats-corpus/candidates/patch_interpreter__cuda_event_elapsed_time.py $MIX/
for id in level1/10_GELU level1/12_Transpose level1/16_LogSoftmax level1/11_ElementwiseChain level1/7_SumReduction level1/8_MaxReduction level1/14_MeanReduction; do
  { printf '# vinci-task: %s\n# vinci-expect: correct/\n# vinci-devices: cuda\n' "$id"; cat "tasks/solutions/cuda/$id.py"; } >"$MIX/solution__${id//\//_}.py"
done
V=$BUILD/src/cli/vinci
VINCI_CACHE=/tmp/vc $V eval --tasks tests/adversarial/tasks --candidates tests/adversarial/candidates --device cuda --expect --no-compile-baseline --no-cache --run-timeout 60 -q --out $OUT/adv.jsonl --deadline 200 > $OUT/adv.txt 2>&1
VINCI_CACHE=/tmp/vc $V eval --tasks tasks --candidates $MIX --device cuda --expect --no-compile-baseline --no-cache --run-timeout 60 -q --out $OUT/mix.jsonl --deadline 330 > $OUT/mix.txt 2>&1
grep -hE "UNEXPECTED|expectations" $OUT/adv.txt $OUT/mix.txt
python3 - $OUT <<'PY'
import json, sys
for f in ("adv", "mix"):
    for l in open(f"{sys.argv[1]}/{f}.jsonl"):
        r = json.loads(l); e = r.get("external") or r.get("timing_check") or {}
        print(f"{r['candidate'].split('/')[-1][:44]:<44} {r['class']+'/'+r['reason']:<28} claim {((r.get('timing') or {}).get('median_ms') or 0):.4f} hidden {e.get('hidden_ms', 0):.4f} spread {e.get('hidden_p10_p90_ms')} allowed {e.get('allowed_ms', 0):.4f}")
PY
