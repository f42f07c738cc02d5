#!/usr/bin/env bash
# Replay passes of candidate metric lists with no --section (tools/metric_candidates.py nosol), one launch of
# triton_mla at 8k each, on the H200; the logs land in $OUT/passes2.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/roofline-out}; P="$OUT/passes2"; mkdir -p "$P"
NCU=${NCU:-/usr/local/cuda/bin/ncu}
echo '{"workload": {"ctx_len": 8192}}' > /tmp/s8k.json
python3 tools/metric_candidates.py nosol > /tmp/nosol.tsv
while IFS=$'\t' read -r name metrics; do
  t0=$SECONDS
  "$NCU" --config-file off --clock-control none --cache-control all --nvtx --nvtx-include roofline/ --metrics "$metrics" \
    -c 1 -f -o "$P/$name" python3 -m profiler.harness --spec /tmp/s8k.json --kernel triton_mla --iters 1 --warmup 1 > "$P/$name.log" 2>&1
  echo "$name: $(grep -oE '[0-9]+ pass(es)?' "$P/$name.log" | head -1) $(grep -c 'n/a' "$P/$name.log") n/a, $((SECONDS - t0)) s"
done < /tmp/nosol.tsv
(cd "$OUT" && tar czf passes2.tgz passes2 && rm -rf passes2)
