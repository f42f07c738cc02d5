# scores_ahead (FlashMLA's order in warpgroup 0) and persist: checks, then timing against the default, two processes
source tests/fixtures/capture/h200_call.sh /tmp/w
versions
tree_copy persist; cp -a ab/persist/. /tmp/t-persist/
export TREE_CACHES=1 J=$OUT/ab.jsonl
tree_probe /tmp/t-persist p1 300 --check --alternate "pages,pages ahead" | tee $OUT/probe1.txt
tree_probe /tmp/t-persist p2 150 --alternate "pages,pages ahead" | tee $OUT/probe2.txt
step table
python3 tests/fixtures/capture/tree_ab_probe.py $J --table p1,p2
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
