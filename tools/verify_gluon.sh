#!/usr/bin/env bash
# The Gluon kernel's verification call on the H200 (issue 9), one command, results under $OUT:
# the GPU tests, the project's verdict on the new kernel (roofline profile), and roofline bench.
#   (repo root, .whl staged)  OUT=/some/dir bash tools/verify_gluon.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:/tmp/site
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
step() { echo; echo "=== $* ($(date +%T), t=${SECONDS}s)"; }
step "GPU tests"
ROOFLINE_GPU_TESTS=1 timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py > "$OUT/gpu-pytest.txt" 2>&1; tail -3 "$OUT/gpu-pytest.txt"
step "bench"
timeout 240 python3 -m roofline bench --kernels triton_mla,triton_mla_decode,triton_mla_fast,triton_mla_fast_graph --ctx 8k,32k,128k \
  --out "$OUT/bench" > "$OUT/bench.txt" 2>&1; echo "exit $?"; grep -v "^\[" "$OUT/bench.txt" | tail -52
for page in 64 1; do
  step "profile: the project's verdict on the default sm_90 path, page $page"
  timeout 120 python3 -m roofline profile --kernel triton_mla_fast --ctx 128k --page-size $page --preset verdict \
    --tool ncu --out /tmp/h200-triton_mla_fast-ring-128k-p$page > "$OUT/profile-p$page.txt" 2>&1; echo "exit $?"
  tail -30 "$OUT/profile-p$page.txt"
  tar czf "$OUT/profile-run-p$page.tgz" -C /tmp h200-triton_mla_fast-ring-128k-p$page 2>/dev/null
done
