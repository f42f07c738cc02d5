"""Where the ring kernel's time goes: the ring schedule (kernels/fast/ring.py) against itself with one
part of its work compiled out (its NO_MMA, NO_SOFTMAX, NO_GATHER switches; the results are wrong on
purpose, the loads and barriers stay), one CUDA-graph replay of split + combine each. Needs an sm_90 GPU.

    PYTHONPATH=. python benchmarks/ring_cuts.py [--ctx 131072] [--heads 8] [--page-size 64,1] [--out FILE.json]

Variants: ring (as shipped), no-mma (every MMA of all three warpgroups), no-softmax (the online
softmax: P = the raw scores, O not rescaled), no-gather (the cp.async copies of gathered tiles: at
pages smaller than a tile every tile, else the partial tile and the drafts), loads-only (no MMA and no
softmax: the loads, the barriers and the partials). The ring runs where there is a tail warpgroup:
heads x draft tokens 64 + 1..8 rows (8 heads, 9 tokens: 72).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from kernels.fast.run import triton_mla_fast
from kernels.inputs import build_inputs
from kernels.spec import VerifyWorkload
from profiler.bench import graph_replay_ms
from roofline.removal import FORMAT

VARIANTS = {
    "ring": {},
    "no-mma": dict(no_mma=True),
    "no-softmax": dict(no_softmax=True),
    "no-gather": dict(no_gather=True),
    "loads-only": dict(no_mma=True, no_softmax=True),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ctx", type=int, default=131072, help="ctx_len (default 131072)")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--page-size", default="64,1", help="comma list (default 64,1)")
    ap.add_argument("--out", type=Path, help="also write the rows to this JSON file")
    args = ap.parse_args()
    rows = []
    for page_size in (int(p) for p in args.page_size.split(",")):
        inp = build_inputs(VerifyWorkload(ctx_len=args.ctx, heads=args.heads, page_size=page_size), device="cuda")
        for name, cut in VARIANTS.items():
            ms = graph_replay_ms(lambda cut=cut, inp=inp: triton_mla_fast(inp, path="gluon", ring=True, **cut))
            rows.append(dict(ctx_len=args.ctx, heads=args.heads, page_size=page_size, variant=name, graph_ms=ms))
            print(f"{args.ctx:>8} h{args.heads:<3} p{page_size:<4} {name:11} {ms:.4f} ms", flush=True)
    if args.out:  # the format `roofline analyze --removal FILE` reads (roofline/removal.py)
        doc = dict(
            format=FORMAT,
            kernel="_gluon_ring_kernel",
            registered="triton_mla_fast",
            device=torch.cuda.get_device_name(),
            method="CUDA-graph replays of the step (split + combine), medians",
            made_by="PYTHONPATH=. python " + " ".join(sys.argv),
            workload=dict(batch=1, q_len=9, tree_mask="tree"),
            rows=rows,
        )
        args.out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
