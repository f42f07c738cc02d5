#!/usr/bin/env bash
# FlashMLA on the H200 (issue 20), one GPU-machine call, results under $OUT: build FlashMLA's sm90 dense
# decode, its GPU tests against torch_ref, the toolkit's capture of it and of the fast kernel at the same
# shape (128k, page 64, chain mask) with `roofline compare` between them, and the side-by-side bench.
#   (project root)  FLASHMLA_SRC=DIR CUTLASS_WHL=FILE OUT=/some/dir bash tools/flashmla_h200.sh
# With .flashmla/ already built (carried), the build is skipped.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUT=${OUT:-/tmp/flashmla-out}; R=/tmp/flashmla-runs
mkdir -p "$OUT" "$R"
step() { echo; echo "=== $* ($(date +%T), t=${SECONDS}s)"; }
step versions
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2;
  /usr/local/cuda/bin/ncu --version | tail -1; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } 2>&1 | tee "$OUT/versions.txt"
if ! ls .flashmla/flashmla_dense*.so > /dev/null 2>&1; then
  step "build FlashMLA's sm90 dense bf16 decode"
  timeout 420 python3 tools/build_flashmla.py build --src "$FLASHMLA_SRC" --cutlass "$CUTLASS_WHL" --out .flashmla > "$OUT/build.log" 2>&1
  echo "exit $?"; tail -3 "$OUT/build.log"; grep -E "registers|spill" "$OUT/build.log" | grep -i "splitkv\|combine" | head -4
fi
cp .flashmla/flashmla_dense.so .flashmla/build.json "$OUT/" 2>/dev/null
python3 -m roofline kernels | grep -A1 flashmla
step "GPU tests: flashmla against torch_ref"
ROOFLINE_GPU_TESTS=1 timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_flashmla.py -s 2>&1 | grep -E "CheckResult|passed|failed|Error" | cut -c1-400
step "check, and what it does not support"
python3 -m roofline check --kernel flashmla --ctx 128k --page-size 64 --mask chain
python3 -m roofline check --kernel flashmla --ctx 128k --page-size 64 --mask tree; echo "exit $?"
python3 -m roofline check --kernel flashmla --ctx 128k --page-size 1 --mask chain; echo "exit $?"
for k in flashmla triton_mla_fast; do
  step "profile $k: 128k, page 64, chain mask, ncu verdict preset"
  timeout 150 python3 -m roofline profile --kernel $k --ctx 128k --page-size 64 --mask chain --tool ncu --preset verdict \
    --out $R/h200-$k-chain-128k-p64 > "$OUT/profile-$k.txt" 2>&1; echo "exit $?"; tail -25 "$OUT/profile-$k.txt"
done
step "compare: FlashMLA (base) -> triton_mla_fast (head)"
python3 -m roofline compare $R/h200-flashmla-chain-128k-p64 $R/h200-triton_mla_fast-chain-128k-p64 2>&1 | tee "$OUT/compare.txt"
tar czf "$OUT/runs.tgz" -C $R . 2>/dev/null
step "bench: bare read, FlashMLA, triton_mla_fast (graphs over 4 rotated input sets)"
timeout 240 python3 tools/bench_flashmla.py --out "$OUT/h200-flashmla-bench" 2>&1 | grep -v '^{' | tail -12
step "done"
