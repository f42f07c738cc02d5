"""The measured read fit behind the at-size floor: time = fixed + bytes / rate, fitted to a read of the KV
cache at 75 MB to 1.2 GB (`size_rows`). The reader is a TMA stream with no math (`_stream_kernel`: one or
more programs per SM, NBUF buffers of BLOCK_N tokens, the latent dims in SLICE-wide boxes as the ring
kernel's descriptors, a barrier per tile), and stream_read beside it. The H200's packaged fit
(roofline/data/measured/h200.json: TMA stream, 3 programs per SM) is its `sizes` rows
(docs/results/h200-stream-probe.json, sizes-1); `roofline calibrate` fits stream_read the same way
(profiler/read_sizes.py, roofline/analysis/scaling.py read_fit). Needs an sm_90 GPU.

    PYTHONPATH=. python benchmarks/stream_probe.py OUT_DIR sizes      # or buffers: 1, 2 or 3 tiles in flight
"""

from __future__ import annotations

import json

import numpy as np
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kernels.fast.gluon import _q_in_smem, _q_rows, _tma_load
from kernels.fast.program import _tail_smem
from kernels.stream import stream_read
from profiler.bench import graph_replay_ms
from roofline.analysis.scaling import line_fit


@gluon.jit
def _stream_kernel(
    KLat,
    KPe,
    Q,
    PartO,
    tiles_per_program,
    NBUF: gl.constexpr,
    BLOCK_N: gl.constexpr,
    D_LATENT: gl.constexpr,
    D_ROPE: gl.constexpr,
    Q_ROWS: gl.constexpr,
    OUT_ROWS: gl.constexpr,
    num_warps: gl.constexpr,
):
    """Program p streams tiles [p * tiles_per_program, ...) through NBUF buffers. Q_ROWS > 0: first
    loads that many query rows (64 + 8, as the ring kernel's prologue) into shared memory; OUT_ROWS > 0:
    then writes that many rows of D_LATENT values to PartO (in its dtype), as the kernel's partials."""
    if Q_ROWS > 0:
        q_lat_s, q_pe_s = _q_in_smem(Q, 0, 0, 64, Q_ROWS, D_LATENT, D_ROPE, num_warps)
        qt_lat_s, qt_pe_s, pt_s = _tail_smem(Q, q_lat_s, q_pe_s, 8, BLOCK_N)
        blk: gl.constexpr = gl.BlockedLayout(
            size_per_thread=[1, 8], threads_per_warp=[4, 8], warps_per_cta=[num_warps, 1], order=[1, 0]
        )
        q_lat, q_pe = _q_rows(Q, 0, 64, 8, Q_ROWS, D_LATENT, D_ROPE, blk)
        qt_lat_s.index(0).store(q_lat)
        qt_pe_s.index(0).store(q_pe)
    klat_s = gl.allocate_shared_memory(KLat.dtype, [NBUF, BLOCK_N, D_LATENT], KLat.layout)
    kpe_s = gl.allocate_shared_memory(KPe.dtype, [NBUF, BLOCK_N, D_ROPE], KPe.layout)
    bars = gl.allocate_shared_memory(gl.int64, [NBUF, 1], mbarrier.MBarrierLayout())
    for k in gl.static_range(NBUF):
        mbarrier.init(bars.index(k), count=1)
    fence_async_shared()
    W_: gl.constexpr = KLat.block_type.shape[1]
    PARTS: gl.constexpr = D_LATENT // W_
    row_base = gl.program_id(0) * tiles_per_program * BLOCK_N
    for t in range(tiles_per_program + NBUF):
        u = t % NBUF
        if t >= NBUF:  # tile t - NBUF has landed in buffer u: reuse it
            mbarrier.wait(bars.index(u), ((t - NBUF) // NBUF) & 1)
        if t < tiles_per_program:
            bar = bars.index(u)
            mbarrier.expect(bar, PARTS * KLat.block_type.nbytes + KPe.block_type.nbytes)
            row0 = row_base + t * BLOCK_N
            for k in gl.static_range(PARTS):
                _tma_load(KLat, [row0, k * W_], bar, klat_s.index(u).slice(k * W_, W_, dim=1))
            _tma_load(KPe, [row0, 0], bar, kpe_s.index(u))
    if Q_ROWS > 0:  # read the query rows back (else the compiler drops them)
        q_sum = gl.sum(gl.sum(q_lat_s.index(0).slice(0, 64, dim=1).load(blk).to(gl.float32), 1), 0) + gl.sum(
            gl.sum(qt_pe_s.index(0).load(blk).to(gl.float32), 1), 0
        )
        gl.store(PartO + gl.program_id(0) * D_LATENT * OUT_ROWS, q_sum.to(PartO.dtype.element_ty))
    if OUT_ROWS > 0:  # 64 columns at a time, as the kernel's _half_out
        blk_o: gl.constexpr = gl.BlockedLayout(
            size_per_thread=[1, 4], threads_per_warp=[2, 16], warps_per_cta=[num_warps, 1], order=[1, 0]
        )
        rows = gl.arange(0, 128, layout=gl.SliceLayout(1, blk_o))
        ptr = (
            PartO
            + ((gl.program_id(0) * OUT_ROWS + rows).to(gl.int64) * D_LATENT)[:, None]
            + gl.arange(0, 64, layout=gl.SliceLayout(0, blk_o))[None, :]
        )
        val = gl.full([128, 64], 1.0, gl.float32, blk_o).to(PartO.dtype.element_ty)
        for c in gl.static_range(D_LATENT // 64):
            gl.store(ptr + c * 64, val, mask=(rows < OUT_ROWS)[:, None])


def stream(
    kv2d: torch.Tensor,
    programs: int,
    tiles: int,
    nbuf: int,
    block_n: int,
    slice_w: int,
    q_rows: int = 0,
    out_rows: int = 0,
    out_dtype: torch.dtype = torch.float32,
) -> float:
    """Median ms of one graph replay of the stream kernel."""
    lat = gl.NVMMASharedLayout.get_default_for([block_n, slice_w], gl.bfloat16)
    pe = gl.NVMMASharedLayout.get_default_for([block_n, 64], gl.bfloat16)
    k_lat = TensorDescriptor(kv2d, [kv2d.shape[0], 512], [576, 1], [block_n, slice_w], lat)
    k_pe = TensorDescriptor(kv2d[:, 512:], [kv2d.shape[0], 64], [576, 1], [block_n, 64], pe)

    q = torch.randn(max(q_rows, 1), 576, device="cuda").to(torch.bfloat16)
    part_o = torch.empty(programs, max(out_rows, 1), 512, device="cuda", dtype=out_dtype)

    return graph_ms(
        lambda: _stream_kernel[(programs,)](
            k_lat,
            k_pe,
            q,
            part_o,
            tiles,
            NBUF=nbuf,
            BLOCK_N=block_n,
            D_LATENT=512,
            D_ROPE=64,
            Q_ROWS=q_rows,
            OUT_ROWS=out_rows,
            num_warps=4,
        )
    )


def graph_ms(fn) -> float:
    return graph_replay_ms(fn, rep_ms=100)


SIZE_READERS = (("TMA, 1 program per SM", 1, 2, 64), ("TMA, 3 programs per SM", 3, 2, 32))
# `buffers`: one program per SM with 1, 2 or 3 tiles of 64 tokens in flight (the ring keeps one in flight
# while it works on the other).
BUFFER_READERS = tuple(
    (f"TMA, 1 program per SM, {n} x 64-token buffer{'s' if n > 1 else ''}", 1, n, 64) for n in (1, 2, 3)
)


def size_rows(
    programs: int = 128, token_counts=(512, 1024, 2048, 4096, 8192), readers=SIZE_READERS, stream_read_too: bool = True
) -> list[dict]:
    """The TMA stream (by default: two 64-token buffers per program, and the best layout of stream_rows:
    3 programs per SM, two 32-token buffers) and stream_read over 75 MB to 1.2 GB, for a fit of time =
    fixed + bytes / rate: how much of a kernel's time at 151 MB is a cost that does not grow with the
    bytes. `readers`: (label, programs per SM, buffers, tokens per buffer)."""
    kv2d = torch.randn(programs * max(token_counts) + 4096, 576, device="cuda").to(torch.bfloat16)
    rows = []
    for tokens in token_counts:
        gbytes = programs * tokens * 576 * 2 / 1e9
        for what, per_sm, nbuf, block_n in readers:
            grid = per_sm * programs
            ms = stream(kv2d, grid, tokens * programs // grid // block_n, nbuf, block_n, 128)
            rows.append(dict(what=what, tokens=tokens, gbytes=gbytes, ms=ms, gbps=gbytes / ms * 1e3))
            print(json.dumps(rows[-1]), flush=True)
        if stream_read_too:
            flat = kv2d[: programs * tokens].view(-1)
            ms = graph_ms(lambda: stream_read(flat))  # noqa: B023 (called at once)
            rows.append(dict(what="stream_read", tokens=tokens, gbytes=gbytes, ms=ms, gbps=gbytes / ms * 1e3))
            print(json.dumps(rows[-1]), flush=True)
    for what in sorted({r["what"] for r in rows}):  # least squares: ms = fixed + gbytes / rate
        pts = [r for r in rows if r["what"] == what]
        slope, fixed_ms, _ = line_fit(np.array([r["gbytes"] for r in pts]), np.array([r["ms"] for r in pts]))
        rows.append(dict(what=what, fit=True, fixed_us=fixed_ms * 1e3, rate_gbps=1e3 / slope))
        print(json.dumps(rows[-1]), flush=True)
    return rows
