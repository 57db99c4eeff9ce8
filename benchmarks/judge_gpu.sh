#!/usr/bin/env bash
# The judge alone on a GPU (benchmarks/judge_alone.py): builds only vinci-sandbox and
# vinci-cpu-sampler (seconds, not the minutes all of vinci takes), prebuilds the candidates' extensions
# with 16 build servers, then judges each candidate in turn against its labels.
# Usage (repository root): benchmarks/judge_gpu.sh OUT_DIR [CANDIDATE ...]
#   default candidates: a few CUDA solutions, and the CUDA files of tests/claims (written out from its
#   templates), of tests/hacks and of tests/threats (also written out) that time or profile on the GPU
# Environment: SCALE (default 1), TRIALS (timed windows, default 30), JOBS (build servers, 16),
#   DEFAULTS=1 (the default candidates too, after the named ones).
set -uo pipefail
OUT=${1:-bench-out}
shift || true
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
START=$(date +%s)
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci-sandbox vinci-cpu-sampler
echo "build done at $(( $(date +%s) - START )) s"
python3 scripts/materialize_corpus.py tests/claims /tmp/claims-corpus --suite tasks || exit 1
python3 scripts/materialize_corpus.py tests/threats /tmp/threats-corpus --suite tasks || exit 1
python3 scripts/materialize_corpus.py tests/hacks /tmp/hacks-corpus --suite tasks || exit 1
CANDIDATES=("$@")
if (( ${#CANDIDATES[@]} == 0 )) || [ "${DEFAULTS:-0}" = 1 ]; then
  for s in level1/1_Matmul level1/4_Softmax level1/13_ReLU level1/11_ElementwiseChain level1/17_HalfMatmul \
           level2/1_GemmBiasReLU; do
    CANDIDATES+=("tasks/solutions/cuda/$s.py")
  done
  CANDIDATES+=($(grep -l '^# vinci-devices:.*cuda' /tmp/claims-corpus/candidates/*.py))
  CANDIDATES+=(/tmp/hacks-corpus/candidates/side_stream_torch_stream.py /tmp/hacks-corpus/candidates/side_stream_cuda_stream_create.py
               /tmp/threats-corpus/candidates/library_compute__cublas_from_dlsym.py
               /tmp/threats-corpus/candidates/library_compute__cuda_graph_captured_in_init.py
               /tmp/threats-corpus/candidates/kernelbench_unit__pool_stream_no_join.py
               /tmp/threats-corpus/candidates/patch_interpreter__cuda_event_elapsed_time.py
               /tmp/threats-corpus/candidates/unwatched_work__triton_on_side_stream.py
               /tmp/threats-corpus/candidates/kernelbench_unit__empty_output_reuse_cuda.py)
fi
PYTHONUNBUFFERED=1 python3 benchmarks/judge_alone.py --tasks /tmp/claims-corpus/tasks --sandbox "$BUILD/src/eval/vinci-sandbox" \
  --device cuda --cache /tmp/judge-gpu-cache --scale "${SCALE:-1}" --build-jobs "${JOBS:-16}" \
  --config "{\"timing\": {\"trials\": ${TRIALS:-30}}, \"run_timeout_s\": 120}" --out "$OUT/judge_alone.jsonl" \
  "${CANDIDATES[@]}" 2>&1 | grep -v -e Warning -e 'warnings.warn' | tee "$OUT/judge_alone.txt"
RC=${PIPESTATUS[0]}
echo "total $(( $(date +%s) - START )) s"
exit "$RC"
