"""What one program per SM can stream from the KV cache by TMA with no math, against the split kernel.

The ring kernel (kernels/fast/ring.py) keeps two 72 KB tiles per SM. `stream`: how fast the
same bytes arrive when each program only waits for a tile and reloads its buffer (NBUF buffers of
BLOCK_N tokens, the latent dims in SLICE-wide boxes as the kernel's descriptors, a barrier per tile),
with and without the kernel's prologue (72 query rows into shared memory) and epilogue (72 rows of
partials), against stream_read over the same bytes and over 4 GiB (`roofline bench`'s read ceiling).
`combine`: one CUDA-graph replay each of the default split kernel alone, and with each combine
variant after it (the shipped one with and without PDL, other block shapes; the previous two-pass
kernel's numbers are in docs/results/h200-stream-probe.json, its code in git history before this
file moved to benchmarks/).

`sizes`: the stream and stream_read from 75 MB to 1.2 GB, fitted to time = fixed + bytes / rate;
`buffers`: the same fit for one program per SM with 1, 2 or 3 tiles in flight (the stream kernel and
the fit: roofline/pipelines/read_fit.py, the at-size floor's measured read fit).

    PYTHONPATH=. python benchmarks/stream_probe.py OUT_DIR [stream|combine|sizes|buffers|stream,combine]
    (an sm_90 GPU; prints tables, writes OUT_DIR/stream-probe.json)
"""

from __future__ import annotations

import json
import os
import sys

import torch

from roofline.pipelines.read_fit import BUFFER_READERS, graph_ms, size_rows, stream


def split_and_combine(ctx_len: int = 131072, page_size: int = 64) -> list[dict]:
    """Graph replays of the default fast kernel's split launch alone, and with each combine variant
    after it (and alone): the shipped spec with and without PDL, other block shapes."""
    from kernels.combine import _combine_kernel
    from kernels.fast.paths import plan_fast
    from kernels.fast.run import partials
    from kernels.inputs import build_inputs
    from kernels.launch_spec import CombineShape, combine_spec, device_facts
    from kernels.spec import VerifyWorkload

    inp = build_inputs(VerifyWorkload(ctx_len=ctx_len, heads=8, page_size=page_size), device="cuda")
    w = inp.workload
    _, sm_count, arch = device_facts(inp.q.device)
    plan = plan_fast(w, arch=arch, sm_count=sm_count)
    split, combine = plan.split, plan.combine
    part_o, part_lse = partials(inp, split)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device="cuda")
    splits, rows = split.grid[1], split.int_args["total_rows"]
    variants = [("shipped", combine, True), ("shipped, no PDL", combine, False)]
    for name in ("bd32w2", "bd64w8", "t4096", "bd512"):  # kernels.launch_spec.CombineShape names
        variants.append((name, combine_spec(splits, rows, w.v_dim, pdl=True, shape=CombineShape.parse(name)), True))
    split_ms = graph_ms(lambda: plan.path.launch(inp, split, part_o, part_lse))
    res = []
    for label, spec, pdl in variants:

        def comb(spec=spec, pdl=pdl):
            _combine_kernel[spec.grid](
                part_o,
                part_lse,
                out,
                rows,
                splits,
                **{**spec.constexprs, "PDL": pdl},
                num_warps=spec.num_warps,
                num_stages=spec.num_stages,
                launch_pdl=pdl,
            )

        res.append(
            dict(
                kernel=split.name,
                page_size=page_size,
                splits=splits,
                combine=label,
                split_ms=split_ms,
                combine_ms=graph_ms(comb),
                both_ms=graph_ms(
                    lambda: (
                        plan.path.launch(inp, split, part_o, part_lse),  # noqa: B023
                        comb(),
                    )
                ),
            )
        )
        print(json.dumps(res[-1]), flush=True)
    return res


def stream_rows(programs: int = 128, tokens: int = 1024) -> list[dict]:
    """The TMA stream at several buffer counts and grids, and stream_read, over the same bytes: by default
    the ring's at 128k, 8 heads (128 splits of 1,024 tokens, and one of the 9 drafts)."""
    from kernels.stream import stream_read

    kv2d = torch.randn(programs * tokens + 4096, 576, device="cuda").to(torch.bfloat16)
    gbytes = programs * tokens * 576 * 2 / 1e9
    rows = []
    p = programs
    for grid, nbuf, block_n, slice_w, q_rows, out_rows, out_dtype in [
        (p, 1, 64, 128, 0, 0, None),
        (p, 2, 64, 128, 0, 0, None),
        (p, 3, 64, 128, 0, 0, None),
        (p, 2, 64, 256, 0, 0, None),
        (p, 4, 32, 128, 0, 0, None),
        (p, 6, 32, 128, 0, 0, None),
        (2 * p, 2, 32, 128, 0, 0, None),
        (3 * p, 2, 32, 128, 0, 0, None),
        (4 * p, 2, 32, 128, 0, 0, None),
        # the ring's prologue (72 query rows into shared memory) and epilogue (72 rows of partials)
        (p, 2, 64, 128, 72, 0, None),
        (p, 2, 64, 128, 0, 72, torch.float32),
        (p, 2, 64, 128, 0, 72, torch.bfloat16),
        (p, 2, 64, 128, 72, 72, torch.float32),
    ]:
        ms = stream(
            kv2d,
            grid,
            tokens * programs // grid // block_n,
            nbuf,
            block_n,
            slice_w,
            q_rows,
            out_rows,
            out_dtype or torch.float32,
        )
        what = (
            f"TMA, {grid} programs"
            + (f", {q_rows} q rows first" if q_rows else "")
            + (f", {out_rows} rows of {str(out_dtype).removeprefix('torch.')} out" if out_rows else "")
        )
        rows.append(
            dict(
                what=what,
                nbuf=nbuf,
                block_n=block_n,
                slice=slice_w,
                smem_kb=nbuf * block_n * 576 * 2 // 1024,
                ms=ms,
                gbps=gbytes / ms * 1e3,
            )
        )
        print(json.dumps(rows[-1]), flush=True)
    flat = kv2d[: programs * tokens].view(-1)
    for what, n in (("stream_read, the same bytes", 0), ("stream_read, 4 GiB (roofline bench's read ceiling)", 2**31)):
        x = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_() if n else flat
        ms = graph_ms(lambda: stream_read(x))  # noqa: B023 (called at once)
        rows.append(dict(what=what, nbuf=0, block_n=0, slice=0, smem_kb=0, ms=ms, gbps=x.numel() * 2 / 1e9 / ms * 1e3))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    parts = sys.argv[2] if len(sys.argv) > 2 else "stream,combine"
    sc = [r for p in (64, 1) for r in split_and_combine(page_size=p)] if "combine" in parts else []
    rows = stream_rows() if "stream" in parts else []
    sizes = size_rows() if "sizes" in parts else []
    if "buffers" in parts:
        sizes += size_rows(token_counts=(1024, 2048, 4096, 8192), readers=BUFFER_READERS, stream_read_too=False)
    json.dump(dict(stream=rows, split_combine=sc, sizes=sizes), open(f"{out_dir}/stream-probe.json", "w"), indent=1)
    print(f"\n{torch.cuda.get_device_name()}, one graph replay each")
    if rows:
        print(f"{'what':52} {'buffers':>7} {'tokens':>6} {'slice':>5} {'smem KB':>7} {'ms':>8} {'GB/s':>6}")
    for r in rows:
        print(
            f"{r['what'][:52]:52} {r['nbuf']:>7} {r['block_n']:>6} {r['slice']:>5} {r['smem_kb']:>7} {r['ms']:>8.4f} "
            f"{r['gbps']:>6.0f}"
        )
    if sc:
        print(f"{'split kernel':22} {'page':>4} {'combine':48} {'split':>7} {'combine':>7} {'both':>7}")
    for r in sc:
        print(
            f"{r['kernel']:22} {r['page_size']:>4} {r['combine'][:48]:48} {r['split_ms']:7.4f} "
            f"{r['combine_ms']:7.4f} {r['both_ms']:7.4f}"
        )
    for r in sizes:
        if r.get("fit"):
            print(f"{r['what']:24} fit: {r['fixed_us']:6.1f} us + bytes at {r['rate_gbps']:5.0f} GB/s")
        else:
            print(
                f"{r['what']:24} {r['tokens']:>5} tokens/program {r['gbytes']:6.3f} GB {r['ms']:8.4f} ms "
                f"{r['gbps']:6.0f} GB/s"
            )


if __name__ == "__main__":
    main()
