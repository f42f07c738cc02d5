#!/usr/bin/env bash
# One GPU-machine call that captures the raw evidence the CPU-side code is tested on (session of
# 2026-11-30): chip metric lists, replay-pass cost of candidate metric lists, --set full captures of
# the project's kernels and probes, a labelled corpus of library kernels, nsys timelines (.nsys-rep
# and sqlite), ncu CSV (from reports and mixed into stdout), and real failure logs.
#   (from the repo root, .devlibs staged)  OUT=/some/dir bash tools/capture_h200_fixtures.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/roofline-out}; F="$OUT/f"
mkdir -p "$F"/{chips,csv,nsys,full,corpus,logs,passes} "$OUT/bench" "$OUT/ref"
NCU=${NCU:-/usr/local/cuda/bin/ncu}
NSYS=${NSYS:-$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | tail -1)}
NCUQ="$NCU --config-file off --clock-control none --cache-control all"
step() { echo; echo "=== $* ($(date +%T))"; }
echo '{"workload": {"ctx_len": 8192}}' > /tmp/s8k.json
echo '{"workload": {"ctx_len": 131072}}' > /tmp/s128k.json
echo '{"workload": {"ctx_len": 131072, "page_size": 64}}' > /tmp/s128k_p64.json
H="python3 -m profiler.harness"

step versions
{ "$NCU" --version; "$NSYS" --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } | tee "$F/versions.txt"

step "nested NVTX ranges still match --nvtx-include roofline/"
$NCUQ --nvtx --nvtx-include roofline/ --metrics gpu__time_duration.sum -f -o /tmp/nvtxcheck $H --spec /tmp/s8k.json --kernel triton_mla --iters 2 --warmup 1 2>&1 | grep -E "==PROF==|WARNING|ERROR" | head -5

step chips
"$NCU" --list-chips > "$F/chips/list-chips.txt" 2>&1; cat "$F/chips/list-chips.txt" | head -3
for c in gh100 gb100 gb202; do
  "$NCU" --query-metrics --chip $c > "$F/chips/$c.txt" 2>&1; echo "$c: $(wc -l < "$F/chips/$c.txt") lines, exit $?"
  "$NCU" --query-metrics --chip $c --query-metrics-mode all 2>&1 | gzip -9 > "$F/chips/$c.all.txt.gz"; echo "$c all: $(zcat "$F/chips/$c.all.txt.gz" | wc -l) lines"
done

step "ncu sections (reference only)"
SEC=$(ls -d /opt/nvidia/nsight-compute/*/sections | tail -1); tar czf "$OUT/ref/sections.tgz" -C "$SEC/.." sections; ls -la "$OUT/ref"

step "replay passes per candidate metric list (triton_mla 8k, one launch)"
python3 tools/metric_candidates.py > /tmp/cands.tsv
while IFS=$'\t' read -r name metrics; do
  $NCUQ --nvtx --nvtx-include roofline/ --section SpeedOfLight --metrics "$metrics" -c 1 -f -o "$F/passes/$name" \
    $H --spec /tmp/s8k.json --kernel triton_mla --iters 1 --warmup 1 > "$F/passes/$name.log" 2>&1
  echo "$name: $(grep -oE '[0-9]+ pass(es)?' "$F/passes/$name.log" | head -1) (exit $?)"
done < /tmp/cands.tsv
$NCUQ --nvtx --nvtx-include roofline/ --section SpeedOfLight -c 1 -f -o "$F/passes/sol_only" $H --spec /tmp/s8k.json --kernel triton_mla --iters 1 --warmup 1 > "$F/passes/sol_only.log" 2>&1
echo "sol_only: $(grep -oE '[0-9]+ pass(es)?' "$F/passes/sol_only.log" | head -1)"
$NCUQ --nvtx --nvtx-include roofline/ --section WarpStateStats -c 1 -f -o "$F/passes/warpstate" $H --spec /tmp/s8k.json --kernel triton_mla --iters 1 --warmup 1 > "$F/passes/warpstate.log" 2>&1
echo "WarpStateStats section: $(grep -oE '[0-9]+ pass(es)?' "$F/passes/warpstate.log" | head -1)"

step "--set full: project kernels and probes"
t0=$SECONDS; $NCUQ --nvtx --nvtx-include roofline/ --set full -f -o "$F/full/triton_mla_128k_full" $H --spec /tmp/s128k.json --kernel triton_mla --iters 1 --warmup 1 2>&1 | grep -E "passes|ERROR" | head -3; echo "wall $((SECONDS-t0)) s"
t0=$SECONDS; $NCUQ --nvtx --nvtx-include roofline/ --set full -f -o "$F/full/triton_mla_fast_128k_p64_full" $H --spec /tmp/s128k_p64.json --kernel triton_mla_fast --iters 1 --warmup 1 2>&1 | grep -E "passes|ERROR" | head -3; echo "wall $((SECONDS-t0)) s"
for p in stream_copy matmul pointer_chase small_grid l2_reread; do
  $NCUQ --nvtx --nvtx-include roofline/ --set full -f -o "$F/full/probe_${p}_full" python3 -m profiler.probes $p 2>&1 | grep -E "passes|ERROR" | head -2
done

step "corpus: library kernels under --set full"
for op in gemm sdpa add copy softmax rowsum embedding_bag topk; do
  $NCUQ --nvtx --nvtx-include corpus/ --set full -c 3 -f -o "$F/corpus/$op" python3 tools/corpus_ops.py $op > "$F/corpus/$op.log" 2>&1
  echo "$op: $(grep -cE 'passes' "$F/corpus/$op.log") launches, $(grep -oE '"[^"]{0,60}"' "$F/corpus/$op.log" | sort -u | head -3 | tr '\n' ' ')"
done
t0=$SECONDS; $NCUQ --nvtx --nvtx-include corpus/ --set full -f -o "$OUT/bench/tiny10_full" python3 tools/corpus_ops.py tiny > /dev/null 2>&1; echo "tiny10 wall $((SECONDS-t0)) s"

step "ncu CSV"
for r in roofline/data/samples/h200-triton_mla-128k/profile.ncu-rep tests/fixtures/h200/runs/h200-triton_mla_fast-128k-p64/profile.ncu-rep tests/fixtures/h200/triton_mla_8k_full.ncu-rep; do
  n=$(basename "$(dirname "$r")"); [ "$n" = h200 ] && n=triton_mla_8k_full
  "$NCU" -i "$r" --csv --page raw > "$F/csv/$n.raw.csv" 2>&1; echo "$n: $(wc -l < "$F/csv/$n.raw.csv") lines"
done
"$NCU" -i tests/fixtures/h200/runs/h200-triton_mla_fast-128k-p64/profile.ncu-rep --csv --page raw --print-units base > "$F/csv/h200-triton_mla_fast-128k-p64.base-units.csv" 2>&1
M=$(python3 -c "from profiler.ncu import DEFAULT_METRICS; print(','.join(DEFAULT_METRICS))")
$NCUQ --nvtx --nvtx-include roofline/ --section SpeedOfLight --metrics "$M" --csv --page raw $H --spec /tmp/s8k.json --kernel triton_mla_fast --iters 2 --warmup 1 > "$F/csv/fast8k_stdout_mixed.txt" 2>&1; echo "mixed exit $?"
$NCUQ --nvtx --nvtx-include roofline/ --section SpeedOfLight --metrics "$M" -f -o "$F/csv/fast8k" $H --spec /tmp/s8k.json --kernel triton_mla_fast --iters 2 --warmup 1 > /dev/null 2>&1
"$NCU" -i "$F/csv/fast8k.ncu-rep" --csv --page raw > "$F/csv/fast8k.raw.csv" 2>&1; echo "fast8k report+csv: $?"

step nsys
NS="$NSYS profile -t cuda,nvtx -s none --cpuctxsw=none -f true"
for k in triton_mla_fast triton_mla; do
  t0=$SECONDS; $NS -o "$F/nsys/${k}_8k" $H --spec /tmp/s8k.json --kernel $k --iters 20 --warmup 2 > "$F/nsys/${k}_8k.log" 2>&1; echo "$k nsys exit $? wall $((SECONDS-t0)) s"
  "$NSYS" export --type sqlite -f true -o "$F/nsys/${k}_8k.sqlite" "$F/nsys/${k}_8k.nsys-rep" >> "$F/nsys/${k}_8k.log" 2>&1; echo "export exit $?"
  "$NSYS" stats --report cuda_gpu_kern_sum --format csv "$F/nsys/${k}_8k.sqlite" > "$F/nsys/${k}_8k.kern_sum.csv" 2>&1
done
t0=$SECONDS; $NS -o "$F/nsys/triton_mla_fast_128k" $H --spec /tmp/s128k.json --kernel triton_mla_fast --iters 10 --warmup 2 > /dev/null 2>&1; "$NSYS" export --type sqlite -f true -o "$F/nsys/triton_mla_fast_128k.sqlite" "$F/nsys/triton_mla_fast_128k.nsys-rep" >/dev/null 2>&1; echo "fast 128k nsys wall $((SECONDS-t0)) s"
python3 - "$F/nsys/triton_mla_fast_8k.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(sorted(r[0] for r in c.execute("select name from sqlite_master where type='table'")))
print([r for r in c.execute("select * from META_DATA_EXPORT limit 20")])
PY

step "failure logs"
TINY="import torch; torch.ones(8, device='cuda').sum(); torch.cuda.synchronize()"
$NCUQ --metrics gpu__time_duration.sum,no_such__metric.sum -c 1 -f -o "$F/logs/unknown_metric" python3 -c "$TINY" > "$F/logs/ncu_unknown_metric.log" 2>&1; echo "unknown metric exit $?"
$NCUQ -c 1 python3 -c "import os, signal, torch; torch.ones(1, device='cuda'); os.kill(os.getpid(), signal.SIGKILL)" > "$F/logs/ncu_app_killed.log" 2>&1; echo "killed exit $?"
$NS -o "$F/logs/nsys_app_failed" python3 -c "import sys; sys.exit(3)" > "$F/logs/nsys_app_failed.log" 2>&1; echo "nsys app failed exit $?"
$NS -o "$F/logs/nsys_no_cuda" python3 -c "print('no cuda here')" > "$F/logs/nsys_no_cuda.log" 2>&1; echo "nsys no cuda exit $?"
"$NSYS" export --type sqlite -f true -o "$F/logs/nsys_no_cuda.sqlite" "$F/logs/nsys_no_cuda.nsys-rep" >> "$F/logs/nsys_no_cuda.log" 2>&1; echo "no-cuda export exit $?"
(unset LD_LIBRARY_PATH; cd /tmp && timeout 60 $NS -o /tmp/nolibs python3 -c "$TINY" > "$F/logs/nsys_missing_libs.log" 2>&1; echo "nsys without libs exit $?"; ls /tmp/nolibs* 2>/dev/null)
useradd -m rfuser >/dev/null 2>&1; chmod -R a+rX "$PWD" 2>/dev/null
su rfuser -s /bin/bash -c "cd /tmp && $NCU --clock-control none -c 1 -f -o /tmp/perm python3 -c \"$TINY\"" > "$F/logs/ncu_non_root.log" 2>&1; echo "non-root ncu exit $?"; head -5 "$F/logs/ncu_non_root.log"
cat /proc/driver/nvidia/params 2>/dev/null | grep -i Profiling

step pack
rm -f "$F"/*/*.qdstrm
(cd "$F" && tar czf "$OUT/full.tgz" full && tar czf "$OUT/corpus.tgz" corpus && tar czf "$OUT/misc.tgz" chips csv nsys logs passes versions.txt)
(cd "$OUT" && tar czf bench.tgz bench && rm -rf bench f && ls -la "$OUT" "$OUT/ref")
