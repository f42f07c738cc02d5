#!/usr/bin/env bash
# One GPU-machine session: checks, the fast kernel's sweep (-> kernels/data/tuned.json), calibrate
# (-> roofline/data/measured/h200.json), profiles of every kernel (the sample run among them), the
# validation probes, the benchmark, and real ncu failure logs. Everything lands in $OUT/out.tgz.
#   OUT=/some/dir bash tools/session_h200.sh
set -u
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/roofline-out}; R="$OUT/r"; mkdir -p "$R/runs" "$R/probes" "$R/logs"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
step() { echo; echo "=== $* ($(date +%T))"; }

step "ncu_report from Nsight Compute's extras/python (no wheel on the path)"
timeout 120 python3 -m roofline analyze roofline/data/samples/h200-triton_mla-128k 2>&1 | tail -4; echo "analyze with the install's ncu_report: exit ${PIPESTATUS[0]}"
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site; fi
python3 -m pip install -q --no-build-isolation --no-deps --no-index -e . >/dev/null 2>&1 \
  || { echo "pip -e failed; using python3 -m roofline"; roofline() { python3 -m roofline "$@"; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

if [ "${PHASE:-A}" = A ]; then
step gpu tests
ROOFLINE_GPU_TESTS=1 python3 -m pytest -q -m gpu tests/ 2>&1 | tail -3

step tune
python3 tools/tune_fast.py "$R" 2>&1 | grep -v "^tune:"; cp kernels/data/tuned.json "$R/"

step calibrate
roofline calibrate --save && cp roofline/data/measured/h200.json "$R/"

step profiles
rm -rf roofline/data/samples/h200-triton_mla-128k
t0=$SECONDS; roofline profile --kernel triton_mla --ctx 128k --out roofline/data/samples/h200-triton_mla-128k > "$R/runs/sample.txt"; echo "sample exit $? wall $((SECONDS-t0)) s"
cat "$R/runs/sample.txt"; cp -r roofline/data/samples/h200-triton_mla-128k "$R/runs/"
for k in triton_mla_decode triton_mla_fast; do
  t0=$SECONDS; roofline profile --kernel $k --ctx 128k --page-size 64 --out "$R/runs/h200-$k-128k-p64" > "$R/runs/$k.txt"; echo "$k exit $? wall $((SECONDS-t0)) s"; tail -25 "$R/runs/$k.txt"
done
roofline profile --kernel triton_mla_fast --ctx 128k --heads 64 --out "$R/runs/h200-triton_mla_fast-128k-h64" > "$R/runs/fast_h64.txt"; echo "fast h64 exit $?"

step validate
roofline validate --out "$R/probes" 2>&1 | grep -E "^(ok|WRONG)|Error"

step "real ncu failure logs"
"$NCU" --clock-control none python3 -m profiler.harness --spec /nonexistent.json --kernel triton_mla > "$R/logs/ncu_app_failed.log" 2>&1; echo "app failed exit $?"
"$NCU" --clock-control none --nvtx --nvtx-include "*/x/" python3 -c pass > "$R/logs/ncu_bad_option.log" 2>&1; echo "bad option exit $?"

fi
if [ "${PHASE:-A}" = B ]; then
step bench
roofline bench --out "$R" 2>"$R/bench.log"; echo "bench exit $?"; tail -60 "$R/bench.log" | grep -v "^\["
fi
(cd "$OUT" && tar czf out.tgz r && rm -rf r && ls -la)
