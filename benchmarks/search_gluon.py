"""One GPU session for the Gluon split kernels (kernels/fast/): every Gluon
candidate checked against torch_ref (pages 1/16/32/64/128, tree and chain masks, ragged batches,
contexts that are not tile multiples, splits without a whole tile), then every candidate timed at
each shape: do_bench median (L2 flushed), one CUDA-graph replay, and the host's enqueue cost.

    python benchmarks/search_gluon.py OUT_DIR [CANDIDATES|all] [SHAPE,SHAPE...]
    e.g. python benchmarks/search_gluon.py /tmp/out g-seesaw,g-seesaw-pad "128k h8 p64,128k h64 p64"
SEARCH_NO_CHECKS=1 skips the checks (for timing variants already checked); a shape matches any
label containing it ("8k h8 p64" also picks "128k h8 p64").
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
import triton.testing

from kernels.check import REL_TOL, finite_rel_err
from kernels.inputs import build_inputs
from kernels.reference import torch_ref
from kernels.spec import VerifyWorkload
from profiler.bench import graph_replay_ms

PP1 = dict(programs_per_sm=1.0)
CANDIDATES = {
    "hopper (triton)": ("hopper", dict(PP1)),
    "portable": ("portable", {}),
    # The seesaw's pairs of tiles (ring=False spelled out since the ring became the default):
    "g-seesaw-pad": ("gluon", dict(seesaw=True, tail_m=0)),  # 72 rows as two 64-row blocks
    "g-seesaw": ("gluon", dict(seesaw=True, ring=False)),  # 64 rows + an 8-row tail warpgroup (long splits)
    "g-seesaw-tail": ("gluon", dict(seesaw=True, ring=False, tail_m=8)),  # the tail at any length
    "g-seesaw-bf16p": ("gluon", dict(seesaw=True, ring=False, partials="input")),  # partials in the input dtype
    # The ring schedule (kernels/fast/ring.py): the default where the tail is, at pages >= 16.
    "g-ring": ("gluon", dict(seesaw=True, ring=True)),  # where the tail is (long splits), any page size
    "g-ring-tail": ("gluon", dict(seesaw=True, ring=True, tail_m=8)),  # ... at any length
    "g-ring-bf16p": ("gluon", dict(seesaw=True, ring=True, partials="input")),  # partials in the input dtype
    # gathered tiles complete their barriers as their copies land (the tail no longer waits for them)
    "g-ring-ag": ("gluon", dict(seesaw=True, ring=True, async_gather=True)),
    # the ring where the rows are whole 64-row blocks (64 heads): its third warpgroup only loads
    "g-ring-whole": ("gluon", dict(ring_whole=True, stagger=False)),
    # the seesaw in FlashMLA's order of work (kernels/fast/stagger.py; whole 64-row blocks)
    "g-stagger": ("gluon", dict(stagger=True)),
    "g-default": ("gluon", {}),  # whatever kernels.fast.common.GLUON_CONFIG picks
    "g-default-bf16p": ("gluon", dict(partials="input")),  # ... with partials in the input dtype
}
SHAPES = [
    ("128k h8 p64", VerifyWorkload(ctx_len=131072, heads=8, page_size=64)),
    ("128k h8 p1", VerifyWorkload(ctx_len=131072, heads=8, page_size=1)),
    ("128k h8 p16", VerifyWorkload(ctx_len=131072, heads=8, page_size=16)),
    ("128k h64 p64", VerifyWorkload(ctx_len=131072, heads=64, page_size=64)),
    ("128k h64 p1", VerifyWorkload(ctx_len=131072, heads=64, page_size=1)),
    ("32k h64 p64", VerifyWorkload(ctx_len=32768, heads=64, page_size=64)),
    ("8k h64 p64", VerifyWorkload(ctx_len=8192, heads=64, page_size=64)),
    ("64k h8 p64", VerifyWorkload(ctx_len=65536, heads=8, page_size=64)),
    ("64k h8 p1", VerifyWorkload(ctx_len=65536, heads=8, page_size=1)),
    ("32k h8 p64", VerifyWorkload(ctx_len=32768, heads=8, page_size=64)),
    ("8k h8 p64", VerifyWorkload(ctx_len=8192, heads=8, page_size=64)),
    ("8k h8 p1", VerifyWorkload(ctx_len=8192, heads=8, page_size=1)),
    # longer contexts: how the step's time grows with the bytes (its fixed part, its per-byte rate)
    ("256k h8 p64", VerifyWorkload(ctx_len=262144, heads=8, page_size=64)),
    ("512k h8 p64", VerifyWorkload(ctx_len=524288, heads=8, page_size=64)),
    ("1024k h8 p64", VerifyWorkload(ctx_len=1048576, heads=8, page_size=64)),
    ("512k h8 p1", VerifyWorkload(ctx_len=524288, heads=8, page_size=1)),
]
CHECKS = [
    VerifyWorkload(ctx_len=100_003, page_size=64, tree_mask="tree", seed=2),
    VerifyWorkload(ctx_len=100_003, page_size=1, tree_mask="tree", seed=12),
    VerifyWorkload(ctx_len=5000, page_size=64, tree_mask="chain", seed=3),
    VerifyWorkload(ctx_len=1000, ctx_lens=(4093, 70001, 131072), batch=3, page_size=64, seed=4),
    VerifyWorkload(
        ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=16, heads=64, tree_mask="chain", seed=5
    ),
    VerifyWorkload(
        ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=128, heads=64, tree_mask="chain", seed=15
    ),
    VerifyWorkload(ctx_len=40, page_size=64, seed=6),  # shorter than one split: no whole prefix tile in some
    VerifyWorkload(ctx_len=40, page_size=1, seed=16),
    VerifyWorkload(ctx_len=20000, page_size=32, heads=16, seed=7),
    # tails: 136 = 2 x 64 + 8 rows (the first block's tail warpgroup stores nothing); 72 at page 16
    VerifyWorkload(ctx_len=30011, q_len=17, page_size=64, tree_mask="tree", seed=8),
    VerifyWorkload(ctx_len=30011, q_len=17, page_size=1, tree_mask="chain", seed=18),
    VerifyWorkload(ctx_len=1000, ctx_lens=(4093, 70001, 517), batch=3, page_size=16, tree_mask="tree", seed=9),
]
CHECK_TOL = REL_TOL["bf16"]


def run(fn, row, inp, ref, path, cfg, time_it):
    try:
        row["rel_err"] = finite_rel_err(fn(inp, path=path, **cfg), ref)
        row["ok"] = row["rel_err"] <= CHECK_TOL
        if time_it:
            row["median_ms"] = float(
                triton.testing.do_bench(lambda: fn(inp, path=path, **cfg), warmup=10, rep=60, return_mode="median")
            )
            # one replay of split + combine: no host launch cost
            row["graph_ms"] = graph_replay_ms(lambda: fn(inp, path=path, **cfg))
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(50):
                fn(inp, path=path, **cfg)
            row["host_us"] = (time.perf_counter() - t0) / 50 * 1e6  # enqueue cost, GPU running behind
            torch.cuda.synchronize()
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"


def main() -> None:
    from kernels.fast.run import triton_mla_fast

    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)  # before the GPU work: its results are written there at the end
    only = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] != "all" else list(CANDIDATES)
    shapes = [x for x in SHAPES if len(sys.argv) <= 3 or any(k in x[0] for k in sys.argv[3].split(","))]
    rows = []
    t0 = time.time()
    for w in [] if os.environ.get("SEARCH_NO_CHECKS") else CHECKS:
        inp = build_inputs(w, device="cuda")
        ref = torch_ref(inp)
        for name in only:
            path, cfg = CANDIDATES[name]
            if path != "gluon":
                continue
            row = dict(shape="check " + w.describe()[:60], candidate=name)
            run(triton_mla_fast, row, inp, ref, path, cfg, False)
            rows.append(row)
            print(json.dumps(row), flush=True)
        del inp, ref
    for label, w in shapes:
        inp = build_inputs(w, device="cuda")
        ref = torch_ref(inp)
        for name in only:
            path, cfg = CANDIDATES[name]
            if path == "hopper" and w.page_size < 64:
                continue
            row = dict(shape=label, candidate=name)
            run(triton_mla_fast, row, inp, ref, path, cfg, True)
            rows.append(row)
            print(json.dumps(row), flush=True)
        del inp, ref
        torch.cuda.empty_cache()
    json.dump(rows, open(f"{out_dir}/search-gluon.json", "w"), indent=1)
    print(f"\nsearch took {time.time() - t0:.0f} s on {torch.cuda.get_device_name()}")
    print(f"{'shape':44} {'candidate':16} {'ms':>8} {'graph':>8} {'host_us':>7} {'rel_err':>8} ok")
    for r in rows:
        ms = f"{r['median_ms']:.4f}" if "median_ms" in r else "-"
        gms = f"{r['graph_ms']:.4f}" if "graph_ms" in r else "-"
        hus = f"{r['host_us']:.0f}" if "host_us" in r else "-"
        err = f"{r['rel_err']:.1e}" if "rel_err" in r else "-"
        print(
            f"{r['shape'][:44]:44} {r['candidate']:16} {ms:>8} {gms:>8} {hus:>7} {err:>8} {r.get('ok', r.get('error', ''))}"
        )


if __name__ == "__main__":
    main()
