#!/usr/bin/env bash
# Issue 16's learning run on the GPU machine: builds vinci there and runs benchmarks/learning_run.py,
# the run's stages written once (tests/cli/learning_pipeline_test.py runs the same stages on the CPU
# at toy size). Its docstring lists the settings (BUDGET, STATE_IN, SEED, RL_STEPS, RL_CONTINUE, ...),
# read from the environment; a job packs the state into $OUT/state.tgz.part-* of 15 MiB, which the
# next job gets back as STATE_IN (see docs/learning.md for the commands).
# Usage (repository root): benchmarks/learning_gpu.sh OUT_DIR
set -uo pipefail
OUT=${1:-learning-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
source benchmarks/gpu_host_setup.sh
gpu_build -DVINCI_BUILD_TESTS=OFF -DVINCI_BUILD_BENCHMARKS=OFF vinci vinci-sandbox vinci-cpu-sampler
rm -f "$OUT/cmake.log"  # at most 8 files come back; the build log matters only when the build fails
# The build's time counts against the job's.
export BUDGET=$((${BUDGET:-540} - SECONDS))
exec python3 benchmarks/learning_run.py "$(realpath "$BUILD/src/cli/vinci")" "$(realpath -m "$BUILD/learning")" "$OUT"
