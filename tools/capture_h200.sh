#!/usr/bin/env bash
# Captures on the GPU machine what the repo commits: the bundled sample run and the parser
# fixtures (tests/fixtures/README.md says which command made which file). Run from the repo
# root there:  OUT=/some/dir bash tools/capture_h200.sh
set -u
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/roofline-out}; mkdir -p "$OUT/fixtures"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
step() { echo; echo "=== $* ($(date +%T))"; }

step versions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
"$NCU" --version | tail -1
python3 -m pip install -q --no-build-isolation --no-deps --no-index -e . >/dev/null 2>&1 && echo "installed roofline CLI" \
  || { echo "pip -e failed; using python3 -m roofline"; roofline() { python3 -m roofline "$@"; }; }

step gpu tests
ROOFLINE_GPU_TESTS=1 python3 -m pytest -q -m gpu tests/ -rA 2>&1 | tail -15

step check
for ps in 1 64; do roofline check --kernel triton_mla --ctx 128k --page-size $ps --device cuda; done

step profile
t0=$SECONDS; roofline profile --kernel triton_mla --ctx 128k --out "$OUT/h200-triton_mla-128k"; echo "profile exit $?, wall $((SECONDS - t0)) s"
if [ ! -f "$OUT/h200-triton_mla-128k/analysis.json" ]; then
  echo "profile failed: trying the NVTX filter by hand"
  for f in "roofline/" "roofline" "*/roofline/"; do
    "$NCU" --clock-control none --nvtx --nvtx-include "$f" --metrics gpu__time_duration.sum python3 -m profiler.harness \
      --spec "$OUT/h200-triton_mla-128k/spec.json" --kernel triton_mla --iters 1 2>&1 | grep -E "==PROF==|==WARNING==|==ERROR==" | head -3
  done
fi

step analyze
roofline analyze "$OUT/h200-triton_mla-128k" --format json > "$OUT/analyze.json"; head -c 1500 "$OUT/analyze.json"

step "fixture: full set, one launch, ctx 8k"
python3 - <<'PY'
import json; json.dump({"workload": {"ctx_len": 8192}}, open("/tmp/spec8k.json", "w"))
PY
"$NCU" --config-file off --clock-control none --nvtx --nvtx-include roofline/ --set full -c 1 -f -o "$OUT/fixtures/triton_mla_8k_full" \
  python3 -m profiler.harness --spec /tmp/spec8k.json --kernel triton_mla --iters 1 --warmup 1 2>&1 | grep -E "==PROF==|==ERROR==|==WARNING==" | tail -3

if [ -z "${ONLY_RUN:-}" ]; then
step "fixture: torch copy + matmul, ncu's default sections"
cat > /tmp/torch_ops.py <<'PY'
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.empty_like(a)
b.copy_(a); c = a @ a; torch.cuda.synchronize()
PY
"$NCU" --config-file off --clock-control none -f -o "$OUT/fixtures/torch_copy_matmul_default" python3 /tmp/torch_ops.py 2>&1 | grep -E "==PROF==|==ERROR==" | tail -4

step "ncu errors: no kernel matched"
"$NCU" --clock-control none -k no_such_kernel python3 /tmp/torch_ops.py > "$OUT/fixtures/ncu_no_kernels.log" 2>&1; echo "exit $?"; tail -5 "$OUT/fixtures/ncu_no_kernels.log"
fi

step sizes
ls -la "$OUT" "$OUT/fixtures" "$OUT/h200-triton_mla-128k"
(cd "$OUT" && tar czf run.tgz h200-triton_mla-128k && tar czf fixtures.tgz fixtures && rm -rf h200-triton_mla-128k fixtures)
ls -la "$OUT"
