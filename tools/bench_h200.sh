#!/usr/bin/env bash
# On the GPU machine: kernel checks at full size, the fast kernel's sweep, the benchmark table,
# and a profile of each kernel. OUT=/some/dir bash tools/bench_h200.sh
set -u
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/roofline-out}; mkdir -p "$OUT/runs"
step() { echo; echo "=== $* ($(date +%T))"; }
step "ncu_report from the Nsight Compute install (extras/python): where does it crash?"
NCU_REPORT_PYTHON=/opt/nvidia/nsight-compute/2025.3.1/extras/python timeout 120 python3 -X faulthandler -c "
from profiler.ncu_reader import read_ncu_report
import ncu_report; print('extras ncu_report at', ncu_report.__file__)
df = read_ncu_report('roofline/data/samples/h200-triton_mla-128k/profile.ncu-rep'); print('extras read ok', df.shape)" 2>&1 | tail -12
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site; fi
python3 -c "import ncu_report; print('ncu_report used from now on:', ncu_report.__file__)"
python3 -m pip install -q --no-build-isolation --no-deps --no-index -e . >/dev/null 2>&1 \
  || { echo "pip -e failed; using python3 -m roofline"; roofline() { python3 -m roofline "$@"; }; }

step gpu tests
ROOFLINE_GPU_TESTS=1 python3 -m pytest -q -m gpu tests/ 2>&1 | tail -4
for k in triton_mla_decode triton_mla_fast; do
  roofline check --kernel $k --ctx 128k --page-size 64 --device cuda; roofline check --kernel $k --ctx 128k --page-size 1 --heads 64 --device cuda
done
roofline check --kernel triton_mla_fast --ctx 128k --page-size 3 --device cuda; echo "page 3 exit $?"

if [ -z "${SKIP_TUNE:-}" ]; then step tune; python3 tools/tune_fast.py "$OUT" 2>&1 | grep -v "^tune:" ; fi

step profiles
for k in ${PROFILE_KERNELS:-triton_mla_decode triton_mla_fast}; do
  t0=$SECONDS; roofline profile --kernel $k --ctx 128k --page-size 64 --out "$OUT/runs/h200-$k-128k-p64" > "$OUT/runs/$k.txt"; echo "$k exit $? wall $((SECONDS-t0)) s"; cat "$OUT/runs/$k.txt"
done

step bench
roofline bench --out "$OUT" ${BENCH_ARGS:-} 2>"$OUT/bench.log"; echo "bench exit $?"
(cd "$OUT" && tar czf runs.tgz runs && rm -rf runs)
