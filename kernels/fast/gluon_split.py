"""triton_mla_fast's Gluon single-schedule kernel (sm_90, `path="gluon", seesaw=False`):
`_gluon_split_kernel`. Both warpgroups work on every tile (each half of its tokens for S, half of O's
columns for PV); KV tiles through a NUM_STAGES ring, refilled as soon as the MMAs that read a stage
retire; the PV MMA of tile i runs into tile i+1's wait.

The M block's query rows (all 576 dims) stay in shared memory for the whole split, so no thread
holds Q in registers; O is 128 fp32 registers a thread. One loop covers every tile: a second loop
for the masked tiles made ptxas copy the accumulator and serialise every wgmma of the kernel
(warning C7515). Shared pieces: kernels/fast/gluon.py.
"""

from __future__ import annotations

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    async_copy,
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from kernels.fast import gluon as common
from kernels.fast.gluon import (
    _LN2,
    _barrier,
    _draft_bits,
    _gather_tile,
    _issue_tile,
    _landed,
    _max_shift,
    _q_rows,
    _reinterpret,
    _split_bounds,
    _start_program,
    _swizzle,
    _visible,
)
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec


@gluon.jit
def _softmax_tile(s, i, n_full, start, hi, ctx_len, bits, qk_scale, m_i, l_i, o, p_s, o_layout: gl.constexpr,
                  BLOCK_N: gl.constexpr):
    """Fold tile i's scores into (m, l), rescale O, and put P in shared memory for the PV MMA.
    Tiles past the whole prefix ones are masked: bounds, and the draft tree for draft tokens."""
    qk = s * qk_scale
    if i >= n_full:
        qk = gl.where(_visible(bits, start, hi, ctx_len, BLOCK_N), qk, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(qk, 1))
    m_safe, alpha = _max_shift(m_i, m_new)
    p = gl.exp2(qk - m_safe[:, None])
    l_i = l_i * alpha + gl.sum(p, 1)
    o = o * gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))[:, None]
    p_s.store(p.to(p_s.dtype))
    fence_async_shared()
    _barrier()  # all of P is in shared memory before either warpgroup's MMA reads it
    return m_new, l_i, o


@gluon.jit
def _tiles(KLat, KPe, KV, PageTable, TreeMask, page_base, b, lo, hi, ctx_len, n_full, n_tiles, qk_scale, rows,
           q_lat_s, q_pe_s, klat_s, kpe_s, p_s, bars, s_zero, m_i, l_i, acc, o_layout: gl.constexpr,
           HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr,
           D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, num_warps: gl.constexpr):
    """Every tile of the split in turn: score MMAs, one wait (that also retires the previous PV
    MMA), refill of the freed stage, softmax, PV MMA left running into the next tile's wait.

    Tiles inside one page (PAGE_SIZE >= BLOCK_N) come by TMA; smaller pages by cp.async gathers
    through the page table, NUM_STAGES - 1 tiles ahead (one commit group per tile, in order)."""
    GATHER: gl.constexpr = PAGE_SIZE < BLOCK_N
    bits = _draft_bits(TreeMask, b, rows, HEADS, Q_LEN)
    if GATHER:
        for k in gl.static_range(NUM_STAGES - 1):
            _gather_tile(KV, PageTable, page_base, lo + k * BLOCK_N, hi, klat_s.index(k), kpe_s.index(k), PAGE_SIZE,
                         D_LATENT, D_ROPE, BLOCK_N, num_warps)
    else:
        for k in gl.static_range(NUM_STAGES):
            _issue_tile(KLat, KPe, PageTable, page_base, lo + k * BLOCK_N, k < n_full, bars.index(k),
                        klat_s.index(k), kpe_s.index(k), PAGE_SIZE)
    for i in range(n_tiles):
        st = i % NUM_STAGES
        start = lo + i * BLOCK_N
        if GATHER:
            async_copy.wait_group(NUM_STAGES - 2)  # tile i's group: the newer ones are tiles i+1..i+NS-2
            _landed()
        elif i < n_full:
            mbarrier.wait(bars.index(st), (i // NUM_STAGES) & 1)
        else:  # the stage's last MMAs retired at an earlier wait, and no TMA targets it any more
            _gather_tile(KV, PageTable, page_base, start, hi, klat_s.index(st), kpe_s.index(st), PAGE_SIZE,
                         D_LATENT, D_ROPE, BLOCK_N, num_warps)
            async_copy.wait_group(0)
            _landed()
        s = warpgroup_mma(q_lat_s, klat_s.index(st).permute((1, 0)), s_zero, use_acc=False, is_async=True)
        s = warpgroup_mma(q_pe_s, kpe_s.index(st).permute((1, 0)), s, is_async=True)
        s, o = warpgroup_mma_wait(0, deps=[s, acc])
        _barrier()  # both warpgroups are past tile i-1's MMAs: its stage may be refilled
        prev = (i + NUM_STAGES - 1) % NUM_STAGES
        if GATHER:  # tile i+NS-1 into tile i-1's stage (at i = 0: the stage no tile used yet)
            _gather_tile(KV, PageTable, page_base, start + (NUM_STAGES - 1) * BLOCK_N, hi, klat_s.index(prev),
                         kpe_s.index(prev), PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, num_warps)
        else:
            nxt = i - 1 + NUM_STAGES
            _issue_tile(KLat, KPe, PageTable, page_base, lo + nxt * BLOCK_N, (i > 0) & (nxt < n_full),
                        bars.index(prev), klat_s.index(prev), kpe_s.index(prev), PAGE_SIZE)
        m_i, l_i, o = _softmax_tile(s, i, n_full, start, hi, ctx_len, bits, qk_scale, m_i, l_i, o, p_s, o_layout,
                                    BLOCK_N)
        acc = warpgroup_mma(p_s, klat_s.index(st), o, is_async=True)
    o = warpgroup_mma_wait(0, deps=[acc])
    if GATHER:
        async_copy.wait_group(0)  # gathers past the last tile (all masked) land before the kernel ends
    return m_i, l_i, o


@gluon.jit
def _gluon_split_kernel(Q, KLat, KPe, KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len,
                        stride_pt, total_rows,
                        HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                        D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
                        BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                        num_warps: gl.constexpr):
    """Grid (m_blocks, splits, batch); one BLOCK_M-row block of one request's rows, one split."""
    mb, split, b = _start_program()
    M: gl.constexpr = Q_LEN * HEADS
    WN: gl.constexpr = num_warps // 4  # warpgroups, side by side along N

    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, WN],
                                                       instr_shape=[16, BLOCK_N // WN, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, WN],
                                                       instr_shape=[16, D_LATENT // WN, 16])
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8],
                                         warps_per_cta=[num_warps, 1], order=[1, 0])
    q_lat_sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=_swizzle(D_LATENT * 2), element_bitwidth=16,
                                                  rank=2)
    q_pe_sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=_swizzle(D_ROPE * 2), element_bitwidth=16, rank=2)
    p_sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=_swizzle(BLOCK_N * 2), element_bitwidth=16, rank=2)

    # Q rows of this block -> shared memory, once.
    q_lat, q_pe = _q_rows(Q, b, mb * BLOCK_M, BLOCK_M, M, D_LATENT, D_ROPE, blk)
    q_lat_s = gl.allocate_shared_memory(Q.dtype.element_ty, [BLOCK_M, D_LATENT], q_lat_sl, q_lat)
    q_pe_s = gl.allocate_shared_memory(Q.dtype.element_ty, [BLOCK_M, D_ROPE], q_pe_sl, q_pe)

    klat_s = gl.allocate_shared_memory(KLat.dtype, [NUM_STAGES, BLOCK_N, D_LATENT], KLat.layout)
    kpe_s = gl.allocate_shared_memory(KPe.dtype, [NUM_STAGES, BLOCK_N, D_ROPE], KPe.layout)
    p_s = gl.allocate_shared_memory(Q.dtype.element_ty, [BLOCK_M, BLOCK_N], p_sl)
    bars = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    for k in gl.static_range(NUM_STAGES):
        mbarrier.init(bars.index(k), count=1)
    fence_async_shared()

    ctx_len, lo, hi, n_full, n_tiles = _split_bounds(KVLens, b, split, split_len, Q_LEN, BLOCK_N)
    page_base = b * stride_pt

    rows = mb * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, s_layout))
    s_zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, s_layout))
    acc = warpgroup_mma_init(gl.zeros([BLOCK_M, D_LATENT], gl.float32, o_layout))
    # One loop for every tile, so the O accumulator stays in one set of registers (a second loop
    # made ptxas copy it and serialise every wgmma of the kernel: warning C7515).
    m_i, l_i, o = _tiles(KLat, KPe, KV, PageTable, TreeMask, page_base, b, lo, hi, ctx_len, n_full, n_tiles, qk_scale,
                         rows, q_lat_s, q_pe_s, klat_s, kpe_s, p_s, bars, s_zero, m_i, l_i, acc, o_layout, HEADS, Q_LEN,
                         PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, NUM_STAGES, num_warps)
    for k in gl.static_range(NUM_STAGES):
        mbarrier.invalidate(bars.index(k))

    # Partial output of this split, normalised, and its log-sum-exp (natural log).
    out_rows = b * M + rows
    lse = gl.where(l_i > 0, (m_i + gl.log2(l_i)) * _LN2, float("-inf"))
    gl.store(PartLse + split * total_rows + out_rows, lse, mask=rows < M)
    o = o / gl.convert_layout(gl.where(l_i > 0, l_i, 1.0), gl.SliceLayout(1, o_layout))[:, None]
    # O leaves through shared memory (the ring is free now), 64 columns at a time, so that no
    # thread holds an address per accumulator register.
    _barrier()
    o_s = _reinterpret(klat_s, gl.float32, [BLOCK_M, D_LATENT],
                       gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0]))
    o_s.store(o)
    _barrier()
    blk_o: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[2, 16],
                                           warps_per_cta=[num_warps, 1], order=[1, 0])
    rows_o = mb * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, blk_o))
    o_ptr = PartO + ((split * total_rows + b * M + rows_o).to(gl.int64) * D_LATENT)[:, None] + \
        gl.arange(0, D_ROPE, layout=gl.SliceLayout(0, blk_o))[None, :]
    for c in gl.static_range(D_LATENT // D_ROPE):
        chunk = o_s.slice(c * D_ROPE, D_ROPE, dim=1).load(blk_o)
        gl.store(o_ptr + c * D_ROPE, chunk.to(PartO.dtype.element_ty), mask=(rows_o < M)[:, None])


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor) -> None:
    """Launch `_gluon_split_kernel` as kernels.fast.paths planned `spec` (whole-width latent tiles)."""
    common.launch(_gluon_split_kernel, inp, spec, part_o, part_lse)
