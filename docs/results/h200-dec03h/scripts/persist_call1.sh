# persistent stagger programs: smoke, full-size checks, timing against the default in one process
source tests/fixtures/capture/h200_call.sh /tmp/w
versions
tree_copy persist; cp -a ab/persist/. /tmp/t-persist/
export TREE_CACHES=1 J=$OUT/ab.jsonl
step smoke
(cd /tmp/t-persist && timeout 150 env PYTHONPATH=/tmp/t-persist TRITON_CACHE_DIR=/tmp/tc-t-persist python3 - <<'PY'
import dataclasses
from kernels.check import check_kernel
from tests.fixtures.capture.tree_ab_probe import rows
w = dataclasses.replace(rows()["ragged32"], seed=31, tree_mask="tree")
r = check_kernel("triton_mla_fast", w, device="cuda", persist=True)
print("smoke ragged32 persist tree:", r.ok, r.unwritten, r.rel_err, flush=True)
PY
) 2>&1 | grep -v -i warn | tee $OUT/smoke.txt
if grep -q "smoke ragged32 persist tree: True" $OUT/smoke.txt; then
  tree_probe /tmp/t-persist persist 380 --check --alternate "persist,persist item_cost 1" | tee $OUT/probe.txt
fi
step table
python3 tests/fixtures/capture/tree_ab_probe.py $J --table persist
