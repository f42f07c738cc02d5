"""One GPU session: every triton_mla_fast candidate config checked against torch_ref and timed
(do_bench median, L2 flushed) at the acceptance shapes; a short table printed last.

    python tools/search_fast.py OUT_DIR [--quick]
"""

from __future__ import annotations

import json
import sys
import time

import torch
import triton.testing

from kernels.check import REL_TOL, finite_rel_err
from kernels.inputs import build_inputs
from kernels.reference import torch_ref
from kernels.spec import VerifyWorkload

P16 = dict(partials="input")
CANDIDATES = {  # name: (path, launch config); "h-" = the Hopper (TMA) path, page_size >= block_n only
    "tuned": ("portable", {}),
    "b64": ("portable", dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0)),
    "b64-ev-p16": ("portable", dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0,
                                    evict_first=True, **P16)),
    "w16": ("portable", dict(block_m=64, block_n=64, num_warps=16, num_stages=2, programs_per_sm=1.0, **P16)),
    "w16-n32s3": ("portable", dict(block_m=64, block_n=32, num_warps=16, num_stages=3, programs_per_sm=1.0, **P16)),
    "w16-n32s3-pp2": ("portable", dict(block_m=64, block_n=32, num_warps=16, num_stages=3, programs_per_sm=2.0,
                                       **P16)),
    "n32s4-pp2": ("portable", dict(block_m=64, block_n=32, num_warps=8, num_stages=4, programs_per_sm=2.0, **P16)),
    "tail-n32s3": ("portable", dict(block_m=64, block_n=32, num_warps=8, num_stages=3, programs_per_sm=1.0,
                                    tail_m=16, **P16)),
    "m32w4-pp2-p16": ("portable", dict(block_m=32, block_n=64, num_warps=4, num_stages=2, programs_per_sm=2.0, **P16)),
    "h-b64": ("hopper", dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0, **P16)),
    "h-w16": ("hopper", dict(block_m=64, block_n=64, num_warps=16, num_stages=2, programs_per_sm=1.0, **P16)),
    "h-w16-pp2": ("hopper", dict(block_m=64, block_n=64, num_warps=16, num_stages=2, programs_per_sm=2.0, **P16)),
    "h-w16-n32s3": ("hopper", dict(block_m=64, block_n=32, num_warps=16, num_stages=3, programs_per_sm=1.0, **P16)),
    "h-w16-n32s4-pp2": ("hopper", dict(block_m=64, block_n=32, num_warps=16, num_stages=4, programs_per_sm=2.0,
                                       **P16)),
    "h-n32s3": ("hopper", dict(block_m=64, block_n=32, num_warps=8, num_stages=3, programs_per_sm=1.0, **P16)),
    "h-tail-w16-n32s3": ("hopper", dict(block_m=64, block_n=32, num_warps=16, num_stages=3, programs_per_sm=1.0,
                                        tail_m=16, **P16)),
}
# The second session: the committed per-arch choice ("default") against its neighbours.
FINAL = {
    "default": (None, {}),
    "portable": ("portable", {}),
    "hopper-pp1": ("hopper", dict(programs_per_sm=1.0)),
    "hopper-pp2": ("hopper", dict(programs_per_sm=2.0)),
    "hopper-pp3": ("hopper", dict(programs_per_sm=3.0)),
    "portable-pp1": ("portable", dict(programs_per_sm=1.0)),
    "default-split128": (None, dict(min_split_len=128)),
    "m32w4s3-pp2": ("portable", dict(block_m=32, block_n=64, num_warps=4, num_stages=3, programs_per_sm=2.0)),
    "m32w4-pp3": ("portable", dict(block_m=32, block_n=64, num_warps=4, num_stages=2, programs_per_sm=3.0)),
}
SHAPES = [  # (label, workload)
    ("128k h8 p1", VerifyWorkload(ctx_len=131072, heads=8, page_size=1)),
    ("128k h8 p64", VerifyWorkload(ctx_len=131072, heads=8, page_size=64)),
    ("128k h64 p64", VerifyWorkload(ctx_len=131072, heads=64, page_size=64)),
    ("32k h8 p64", VerifyWorkload(ctx_len=32768, heads=8, page_size=64)),
    ("8k h8 p64", VerifyWorkload(ctx_len=8192, heads=8, page_size=64)),
]
CHECK_TOL = REL_TOL["bf16"]


def main() -> None:
    from kernels.triton_mla_fast import triton_mla_fast, triton_mla_fast_graph

    out_dir = sys.argv[1]
    final = "--final" in sys.argv
    candidates = FINAL if final else CANDIDATES
    rows = []
    t0 = time.time()
    for label, w in [x for x in SHAPES if not (final and x[0].startswith("32k"))]:
        inp = build_inputs(w, device="cuda")
        ref = torch_ref(inp)
        torch.cuda.synchronize()
        cands = dict(candidates)
        if w.heads == 64:  # M = 576 = 9 x 64: no tail layout
            cands = {k: v for k, v in cands.items() if "tail" not in k}
        if w.page_size < 64:
            cands = {k: v for k, v in cands.items() if v[0] != "hopper"}
        if final and w.page_size >= 64:
            cands = {k: v for k, v in cands.items() if not k.startswith("m32")}
        for name, (path, cfg) in cands.items():
            row = dict(shape=label, candidate=name, path=path, config=cfg)
            try:
                out = triton_mla_fast(inp, path=path, **cfg)
                row["rel_err"] = finite_rel_err(out, ref)
                row["ok"] = row["rel_err"] <= CHECK_TOL
                row["median_ms"] = float(triton.testing.do_bench(
                    lambda: triton_mla_fast(inp, path=path, **cfg), warmup=10, rep=40 if final else 60, return_mode="median"))
            except Exception as e:  # a config that fails to compile or launch is a result too
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
        if label.startswith(("8k", "32k", "128k h8 p64")) and not final:
            g = triton_mla_fast_graph(inp)
            row = dict(shape=label, candidate="graph(tuned)", config={}, rel_err=finite_rel_err(g.clone(), ref))
            row["ok"] = row["rel_err"] <= CHECK_TOL
            row["median_ms"] = float(triton.testing.do_bench(lambda: triton_mla_fast_graph(inp), warmup=10, rep=60,
                                                             return_mode="median"))
            rows.append(row)
            print(json.dumps(row), flush=True)
        if label == "128k h8 p64" and not final:
            from kernels.triton_mla import triton_mla
            row = dict(shape=label, candidate="triton_mla (baseline)", config={},
                       median_ms=float(triton.testing.do_bench(lambda: triton_mla(inp), warmup=5, rep=60,
                                                               return_mode="median")))
            rows.append(row)
        del inp, ref
        torch.cuda.empty_cache()
        json.dump(rows, open(f"{out_dir}/search.json", "w"), indent=1)
    for w in [] if final else [VerifyWorkload(ctx_len=5000, page_size=64, tree_mask="chain", seed=3),
              VerifyWorkload(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=64, seed=4),
              VerifyWorkload(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=128, heads=64, seed=5)]:
        inp = build_inputs(w, device="cuda")
        ref = torch_ref(inp)
        for name in [k for k, v in CANDIDATES.items() if v[0] == "hopper"]:
            path, cfg = CANDIDATES[name]
            row = dict(shape="check " + w.describe()[:40], candidate=name, path=path, config=cfg)
            try:
                row["rel_err"] = finite_rel_err(triton_mla_fast(inp, path=path, **cfg), ref)
                row["ok"] = row["rel_err"] <= CHECK_TOL
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
            rows.append(row)
    json.dump(rows, open(f"{out_dir}/search.json", "w"), indent=1)
    print(f"\nsearch took {time.time() - t0:.0f} s on {torch.cuda.get_device_name()}")
    print(f"{'shape':14} {'candidate':22} {'ms':>8} {'rel_err':>8} ok")
    for r in rows:
        ms = f"{r['median_ms']:.4f}" if "median_ms" in r else "-"
        err = f"{r['rel_err']:.1e}" if "rel_err" in r else "-"
        print(f"{r['shape']:14} {r['candidate']:22} {ms:>8} {err:>8} {r.get('ok', r.get('error', ''))}")


if __name__ == "__main__":
    main()
