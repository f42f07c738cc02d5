"""Sweep triton_mla_fast's launch parameters on the GPU at 128k; write the best per case to
OUT_DIR/tuned.json (and OUT_DIR/tune_*.csv), print the best few. The kernels read
kernels/data/tuned.json: copy the new file there to use it (nothing here writes into the package).

    python3 benchmarks/tune_fast.py [OUT_DIR]
"""

import json
import sys
from pathlib import Path

import torch

from kernels.spec import VerifyWorkload
from profiler.bench import tune

SPACE = {
    "block_m": [16, 32, 64],
    "block_n": [32, 64],
    "num_warps": [4, 8],
    "num_stages": [2],
    "programs_per_sm": [1.0, 2.0],
}
SPACE_H64 = {
    "block_m": [32, 64],
    "block_n": [64],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
    "programs_per_sm": [1.0, 2.0],
}
CASES = [
    dict(heads=8, page_size=64),
    dict(heads=8, page_size=1),
    dict(heads=64, page_size=64),
    dict(heads=64, page_size=1),
]

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
device = torch.cuda.get_device_name()
entries = []
for case in CASES:
    w = VerifyWorkload(ctx_len=128 * 1024, q_len=9, **case)
    space = SPACE_H64 if case["heads"] == 64 else SPACE
    table = tune("triton_mla_fast", w, space).dropna(subset=["median_ms"])
    table.to_csv(out / f"tune_h{case['heads']}_p{case['page_size']}.csv", index=False)
    print(f"\n== triton_mla_fast {w.describe()}: best of {len(table)}")
    print(table.head(5).to_string(index=False))
    best = table.iloc[0].to_dict()
    config = {k: (int(best[k]) if k != "programs_per_sm" else float(best[k])) for k in SPACE}
    entries.append(
        {
            "kernel": "triton_mla_fast",
            "device": device,
            "heads": case["heads"],
            "page_size": case["page_size"],
            "ctx_len": w.ctx_len,
            "config": config,
            "median_ms": round(float(best["median_ms"]), 5),
        }
    )
tuned_path = out / "tuned.json"
tuned_path.write_text(json.dumps({"made_by": "benchmarks/tune_fast.py", "entries": entries}, indent=2) + "\n")
print(f"wrote {tuned_path}: copy it to kernels/data/tuned.json to use it")
