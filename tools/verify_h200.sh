#!/usr/bin/env bash
# The session's verification call on the GPU machine (2026-11-30), one command, results under $OUT:
# quickstart (the README's main job) re-capturing the bundled sample with the default preset and both
# tools, doctor, verdict vs full presets, validate, compile vs ncu, GPU kernel tests, and a sweep
# (interrupted and resumed, one deliberately failing point; on two GPUs also --gpus 0,1).
#   (repo root, .devlibs and .whl staged)  OUT=/some/dir bash tools/verify_h200.sh
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/roofline-out}; W=/tmp/w; mkdir -p "$W" "$OUT"
R="python3 -m roofline"
step() { echo; echo "=== $* ($(date +%T), t=${SECONDS}s)"; }
{
step quickstart
python3 tools/quickstart_env.py where; python3 tools/quickstart_env.py missing
bash tools/quickstart.sh --tool both --out roofline/data/samples/h200-triton_mla-128k --force 2>&1 | tail -60
echo "quickstart exit ${PIPESTATUS[0]}"
if ! python3 -c "import roofline.api, ncu_report" 2>/dev/null; then
  echo "fallback: wheels to /tmp/site, PYTHONPATH"; python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  export PYTHONPATH=$PWD:/tmp/site
  $R profile --kernel triton_mla --ctx 128k --tool both --out roofline/data/samples/h200-triton_mla-128k --force 2>&1 | tail -40
fi
tar czf "$OUT/sample.tgz" -C roofline/data/samples h200-triton_mla-128k
step doctor
$R doctor; echo "doctor exit $?"
step "presets: verdict vs full"
for spec in "triton_mla 128k 1" "triton_mla_fast 128k 64" "triton_mla_decode 128k 64"; do
  set -- $spec
  for p in verdict full; do
    [ "$1" = triton_mla_decode ] && [ $p = full ] && continue
    t0=$SECONDS; $R profile --kernel $1 --ctx $2 --page-size $3 --preset $p --tool ncu --out "$W/$1-$p" > "$W/$1-$p.txt" 2>&1
    echo "$1 $p: exit $? in $((SECONDS-t0)) s; $(grep -E 'replay passes per launch' "$W/$1-$p.txt" | tail -1)"
  done
done
python3 - "$W" <<'PY'
import sys, roofline
for name in ("triton_mla-verdict", "triton_mla-full", "triton_mla_fast-verdict", "triton_mla_fast-full", "triton_mla_decode-verdict"):
    try:
        r = roofline.load(f"{sys.argv[1]}/{name}")
    except Exception as e:
        print(name, "ERROR", e); continue
    e = [x for x in r.manifest.reports if x.tool == "ncu"][0]
    print(f"{name}: preset {e.preset}, {e.passes} passes, wall {r.manifest.wall_s} s, step {r.step and round(r.step['kernel_ms_per_step'], 4)} ms")
    for k in r.analysis.kernels:
        print(f"   {k.label}: {k.bound} / {k.cause} / {k.roof} / {k.unit}; regs {k.registers_per_thread}, smem/block {getattr(k, 'shared_mem_per_block', None)}")
PY
(cd "$W" && tar czf "$OUT/presets.tgz" triton_mla-verdict triton_mla-full triton_mla_fast-verdict triton_mla_fast-full triton_mla_decode-verdict *.txt)
step validate
$R validate --out "$W/validate" 2>&1 | grep -vE "^==PROF==|^\[" | tail -14
step "compile sm_90 (triton $(python3 -c 'import triton; print(triton.__version__)')) vs ncu"
for k in triton_mla triton_mla_decode triton_mla_fast; do $R compile --kernel $k --arch sm_90 --ctx 128k --heads 8 --page-size 64 2>&1 | tail -4; done
python3 - "$W" <<'PY'
import sys
from profiler.readers import read_launches
for name in ("triton_mla-verdict", "triton_mla_fast-verdict", "triton_mla_decode-verdict"):
    import glob
    for f in glob.glob(f"{sys.argv[1]}/{name}/profile.ncu-rep"):
        t = read_launches(f).drop_duplicates("kernel")
        for _, row in t.iterrows():
            print(f"ncu {name}: {row['kernel']}: registers {row['registers_per_thread']}, shared/block {row['shared_mem_per_block']}, grid {row['grid_size']}")
PY
step "GPU kernel tests"
ROOFLINE_GPU_TESTS=1 python3 -m pytest -q -m gpu -p no:cacheprovider tests/ 2>&1 | tail -4
step sweep
G="--kernel triton_mla,triton_mla_fast --ctx 8k,32k,128k --page-size 1,48,64 --iters 1"
t0=$SECONDS; timeout -s INT 45 $R sweep $G --out "$W/sweep1" 2>&1 | tr '\r' '\n' | tail -6; echo "interrupted sweep exit ${PIPESTATUS[0]}"
$R sweep $G --out "$W/sweep1" 2>&1 | tr '\r' '\n' | grep -v "^$" | tail -32; echo "resumed sweep exit ${PIPESTATUS[0]}; one GPU, both halves: $((SECONDS-t0)) s"
NG=$(nvidia-smi -L | wc -l)
if [ "$NG" -ge 2 ]; then
  t0=$SECONDS; $R sweep $G --gpus 0,1 --out "$W/sweep2" 2>&1 | tr '\r' '\n' | tail -4; echo "two-GPU sweep exit ${PIPESTATUS[0]} in $((SECONDS-t0)) s"
fi
(cd "$W" && tar czf "$OUT/sweep.tgz" sweep1/sweep.json sweep1/summary.csv sweep1/sweep.png sweep1/sweep.svg $(ls -d sweep1/triton_mla_fast-128k-h8-q9-p64 2>/dev/null) $(ls sweep2/sweep.json 2>/dev/null))
step done
} 2>&1 | tee "$OUT/log.txt"
