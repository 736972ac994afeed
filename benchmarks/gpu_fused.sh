#!/usr/bin/env bash
# The fused backend on one GPU, unattended, in about 8 minutes (one H200):
#
#   bash benchmarks/gpu_fused.sh [OUT_DIR]      (default OUT_DIR: gpu_fused_out)
#
# Writes OUT_DIR/gpu_fused.log (everything printed) and OUT_DIR/gpu_rows.json.
# 1. per policy: does the fused program compile and run on this GPU, or why it fell
#    back to XLA (benchmarks/fused_lowering.py; 150 s at most);
# 2. benchmarks/gpu.py --check: fused vs XLA on the device vs CPU, lane by lane, then
#    pulls/s of APT, Sequential Halving and UCB1 (K=100, T=1000) for 1e5..1e7
#    arm-lanes and a table of policies at 1e6, once per backend (420 s at most).
# Each step has its own timeout, so the log always ends with what was measured.
set -u
OUT="${1:-gpu_fused_out}"
mkdir -p "$OUT"
LOG="$OUT/gpu_fused.log"
PY="${PYTHON:-python}"
cd "$(dirname "$0")/.."
{
  echo "== $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
  "$PY" -c "import jax; print('jax', jax.__version__, jax.devices())"
  nvidia-smi -L 2>/dev/null
  echo "== 1. fused programs per policy (compiled and run on this device)"
  timeout 150 "$PY" -m benchmarks.fused_lowering --arms 16 --steps 64 \
    apt ucb1 thompson:gauss sequential_halving ucb1:first thompson bayes_ucb \
    successive_rejects augucb eucbv ugapec median_elimination
  echo "== 2. check and throughput, backends xla and fused"
  timeout 420 "$PY" -m benchmarks.gpu --check --reps 64 --arms 100 --steps 1000 \
    --min-arm-lanes 1e5 --max-arm-lanes 1e7 --table-arm-lanes 1e6 \
    --table apt ucb1 sequential_halving successive_rejects thompson:gauss \
    --backends xla,fused --no-kernels --time-limit 330 --out "$OUT"
  echo "== done $(date -u +%FT%TZ); add the jax version above to"
  echo "   jbandits/sim/fused/lowering.py TESTED['triton'] if step 2 shows identical lanes"
} 2>&1 | tee "$LOG"
