"""triton_mla_fast's Gluon path (sm_90, the default there): the split kernel written in Triton's
Gluon dialect against Hopper's own instructions, with the schedule spelled out instead of left to
Triton's pipeliner. Two schedules, one launcher (kernels.launch.fast_specs plans both):

- `_gluon_seesaw_kernel` (default, `seesaw=True`): two warpgroups, each its own partition
  (`gl.warp_specialize`). Warpgroup W scores tiles 2j+W with full-width 64x64 wgmma, the two swap
  row maxima and P through shared memory, and each accumulates its half of O's 512 columns from
  both tiles of a pair. A tile's latent dims arrive by TMA in SEESAW_SLICE-wide slices, a barrier
  each, so scoring starts on the first slice while the rest lands. With TAIL_M (8), the rows past
  the last whole M block (72 = 64 + 8) go to a third warpgroup that reads the same tiles
  transposed (`_seesaw_tail`) instead of to a second, padded 64-row block. With that tail,
  `ring=True` (the default) launches the per-tile variant of this schedule instead
  (kernels/triton_mla_fast_ring.py, which shares this module's helpers and this launcher).
- `_gluon_split_kernel` (`seesaw=False`): both warpgroups work on every tile (each half of its
  tokens for S, half of O's columns for PV); KV tiles through a NUM_STAGES ring, refilled as soon
  as the MMAs that read a stage retire; the PV MMA of tile i runs into tile i+1's wait.

Both keep the M block's query rows (all 576 dims) in shared memory for the whole split, so no
thread holds Q in registers; O is 128 fp32 registers a thread. Tiles inside one page come by TMA;
smaller pages, the partial tile and the draft tokens by cp.async gathers through the page table
(zeros past the end, so a masked score never meets a stale value). The draft tree is a 64-bit mask
per row (q_len <= 64). One loop covers every tile: a second loop for the masked tiles made ptxas
copy the accumulator and serialise every wgmma of the kernel (warning C7515).
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from triton.experimental import gluon
from triton.runtime.jit import constexpr_function
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (async_copy, fence_async_shared, mbarrier, tma,
                                                               warpgroup_mma, warpgroup_mma_init, warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kernels.inputs import VerifyInputs
from kernels.launch import LaunchSpec
from kernels.plan import SEESAW_SLICE
from kernels.softmax import LOG2E

_LN2 = gl.constexpr(0.6931471805599453)
# With a tail warpgroup (TAIL_M): registers of the second main warpgroup and of the tail one
# (setmaxnreg; the first gets what is left, 192). At (216, 72) the tail spilled its MMA
# descriptors: H200, 128k, 8 heads, graph replay 0.100 ms at page 64; at (200, 112) 0.081 ms.
TAIL_REGS = gl.constexpr((200, 112))
# Triton 3.6 (the H200 machine's) names the copies async_copy_global_to_shared; later releases
# async_load (the old name then raises).
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_cp_async = getattr(async_copy, "async_load", None) or async_copy.async_copy_global_to_shared
_barrier = getattr(gl, "thread_barrier", None) or gl.barrier  # a CTA-wide bar.sync (renamed later)


@gluon.jit
def _reinterpret(buf, dtype: gl.constexpr, shape: gl.constexpr, layout: gl.constexpr):
    """The same shared memory seen with another dtype/shape/layout (3.6: _reinterpret; later: reinterpret)."""
    if hasattr(buf, "reinterpret"):
        return buf.reinterpret(dtype, shape, layout)
    else:
        return buf._reinterpret(dtype, shape, layout)


@constexpr_function
def _swizzle(row_bytes):
    """The widest NVMMA swizzle a row of `row_bytes` bytes allows."""
    return 128 if row_bytes >= 128 else (64 if row_bytes >= 64 else 32)


@gluon.jit
def _issue_tile(KLat, KPe, PageTable, page_base, start, ok, bar, klat_buf, kpe_buf, PAGE_SIZE: gl.constexpr):
    """TMA one BLOCK_N-token tile (inside one page) into a ring stage; nothing when not `ok`."""
    page = gl.load(PageTable + page_base + start // PAGE_SIZE, mask=ok, other=0)
    row0 = page * PAGE_SIZE + start % PAGE_SIZE
    mbarrier.expect(bar, KLat.block_type.nbytes + KPe.block_type.nbytes, pred=ok)
    _tma_load(KLat, [row0, 0], bar, klat_buf, pred=ok)
    _tma_load(KPe, [row0, 0], bar, kpe_buf, pred=ok)


@gluon.jit
def _gather_tile(KV, PageTable, page_base, start, hi, klat_buf, kpe_buf, PAGE_SIZE: gl.constexpr,
                 D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, num_warps: gl.constexpr):
    """cp.async a tile's tokens below `hi` (each through its own page-table entry) into a stage,
    zeros past `hi`, 64 columns at a time; one commit group. The caller waits for it."""
    _gather_rows(KV, _tile_pages(PageTable, page_base, start, hi, PAGE_SIZE, BLOCK_N, num_warps), start, hi,
                 klat_buf, kpe_buf, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, num_warps)


@gluon.jit
def _tile_pages(PageTable, page_base, start, hi, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr,
                num_warps: gl.constexpr):
    """The page of each of a tile's tokens (0 past `hi`), as _gather_rows takes them."""
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8],
                                         warps_per_cta=[num_warps, 1], order=[1, 0])
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, blk))
    return gl.load(PageTable + page_base + pos // PAGE_SIZE, mask=pos < hi, other=0)


@gluon.jit
def _gather_rows(KV, page, start, hi, klat_buf, kpe_buf, PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr,
                 D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, num_warps: gl.constexpr):
    """_gather_tile's copies, with the tile's pages already loaded (_tile_pages)."""
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8],
                                         warps_per_cta=[num_warps, 1], order=[1, 0])
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, blk))
    ok = pos < hi
    ptr = KV + ((page.to(gl.int64) * PAGE_SIZE + pos % PAGE_SIZE) * (D_LATENT + D_ROPE))[:, None] + \
        gl.arange(0, D_ROPE, layout=gl.SliceLayout(0, blk))[None, :]
    for c in gl.static_range(D_LATENT // D_ROPE):
        _cp_async(klat_buf.slice(c * D_ROPE, D_ROPE, dim=1), ptr + c * D_ROPE, mask=ok[:, None])
    _cp_async(kpe_buf, ptr + D_LATENT, mask=ok[:, None])
    async_copy.commit_group()


@gluon.jit
def _launch_dependents():
    """Programmatic dependent launch: the next kernel in the stream (the combine) may start now; it
    waits for this grid's writes itself (griddepcontrol.wait). A no-op when it was not so launched."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32, is_pure=False,
                              pack=1)


@gluon.jit
def _landed():
    """After this thread's cp.async groups are waited for: every thread's copies are visible to
    the MMAs (async proxy) of both warpgroups."""
    fence_async_shared()
    _barrier()


@gluon.jit
def _draft_bits(TreeMask, b, rows, HEADS: gl.constexpr, Q_LEN: gl.constexpr):
    """Per query row, the draft tokens it may see as bits of an int64 (bit j: draft token j), so
    that the masked tiles test a shift instead of loading a [rows, tokens] block of the mask.
    Built in the rows' own layout (no layout conversion: its scratch would cost shared memory)."""
    ok = rows < Q_LEN * HEADS
    mask_row = TreeMask + (b * Q_LEN + rows // HEADS) * Q_LEN
    bits = (rows * 0).to(gl.int64)
    for j in range(Q_LEN):
        vis = gl.load(mask_row + j, mask=ok, other=0)
        bits = bits | ((vis != 0).to(gl.int64) << j)
    return bits


@gluon.jit
def _visible(bits, start, hi, ctx_len, BLOCK_N: gl.constexpr):
    """[rows, BLOCK_N] mask of the tile at `start`: below `hi`, and a prefix token or a draft
    token the row's bits allow."""
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, bits.type.layout.parent))
    j = pos - ctx_len
    shift = gl.minimum(gl.maximum(j, 0), 63).to(gl.int64)
    tree = ((bits[:, None] >> shift[None, :]) & 1) != 0
    return (pos < hi)[None, :] & ((j < 0)[None, :] | tree)


@gluon.jit
def _q_rows(Q, b, row0, ROWS: gl.constexpr, M: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
            blk: gl.constexpr):
    """Query rows row0..row0+ROWS-1 (latent part, rope part) in layout `blk`, zeros past row M."""
    rows = row0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, blk))
    q_ptr = Q + ((b * M + rows).to(gl.int64) * (D_LATENT + D_ROPE))[:, None]
    ok = (rows < M)[:, None]
    q_lat = gl.load(q_ptr + gl.arange(0, D_LATENT, layout=gl.SliceLayout(0, blk))[None, :], mask=ok, other=0.0)
    q_pe = gl.load(q_ptr + D_LATENT + gl.arange(0, D_ROPE, layout=gl.SliceLayout(0, blk))[None, :], mask=ok, other=0.0)
    return q_lat, q_pe


@gluon.jit
def _q_in_smem(Q, b, row0, ROWS: gl.constexpr, M: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
               num_warps: gl.constexpr):
    """Query rows row0..row0+ROWS-1 (zeros past row M) in shared memory as MMA operands: (latent part,
    rope part), each [1, ROWS, dims] (indexed with an opaque zero in the loops)."""
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8],
                                         warps_per_cta=[num_warps, 1], order=[1, 0])
    q_lat, q_pe = _q_rows(Q, b, row0, ROWS, M, D_LATENT, D_ROPE, blk)
    lat_sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=_swizzle(D_LATENT * 2), element_bitwidth=16,
                                                rank=2)
    pe_sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=_swizzle(D_ROPE * 2), element_bitwidth=16, rank=2)
    q_lat_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, ROWS, D_LATENT], lat_sl)
    q_lat_s.index(0).store(q_lat)
    q_pe_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, ROWS, D_ROPE], pe_sl)
    q_pe_s.index(0).store(q_pe)
    return q_lat_s, q_pe_s


@gluon.jit
def _tail_rows_in_smem(Q, b, qt_lat_s, qt_pe_s, ROW0: gl.constexpr, TAIL_M: gl.constexpr, M: gl.constexpr,
                       D_LATENT: gl.constexpr, D_ROPE: gl.constexpr):
    """The tail warpgroup's query rows ROW0.. (zeros past row M) into its shared memory, visible to its MMAs."""
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], warps_per_cta=[4, 1],
                                         order=[1, 0])
    q_lat, q_pe = _q_rows(Q, b, ROW0, TAIL_M, M, D_LATENT, D_ROPE, blk)
    qt_lat_s.index(0).store(q_lat)
    qt_pe_s.index(0).store(q_pe)
    fence_async_shared()
    _barrier()


@gluon.jit
def _main_start(TreeMask, b, mb, HEADS: gl.constexpr, Q_LEN: gl.constexpr, D_LATENT: gl.constexpr,
                BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """A main warpgroup's start on its M block: (rows, zero scores, row maxima, row sums, its half of O, the
    rows' draft-tree bits). Scores and O are wgmma accumulators; the row vectors are rows of the scores
    (`m_i.type.layout`), and O's rows take `gl.SliceLayout(1, o.type.layout)`."""
    HALF: gl.constexpr = D_LATENT // 2
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, HALF, 16])
    row_l: gl.constexpr = gl.SliceLayout(1, s_layout)
    rows = mb * BLOCK_M + gl.arange(0, BLOCK_M, layout=row_l)
    s_zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_l)
    l_i = gl.zeros([BLOCK_M], gl.float32, row_l)
    o = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    return rows, s_zero, m_i, l_i, o, _draft_bits(TreeMask, b, rows, HEADS, Q_LEN)


@gluon.jit
def _tail_smem(Q, q_lat_s, q_pe_s, TAIL_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """The tail warpgroup's shared memory: its query rows (latent part, rope part) and its P^T."""
    D_LATENT: gl.constexpr = q_lat_s.shape[2]
    D_ROPE: gl.constexpr = q_pe_s.shape[2]
    qt_lat_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, D_LATENT], q_lat_s.layout)
    qt_pe_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, D_ROPE], q_pe_s.layout)
    pt_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, BLOCK_N], q_pe_s.layout)
    return qt_lat_s, qt_pe_s, pt_s


@gluon.jit
def _split_bounds(KVLens, b, split, split_len, Q_LEN: gl.constexpr, BLOCK_N: gl.constexpr):
    """(ctx_len, lo, hi, n_full, n_tiles) of request b's split: tokens [lo, hi); the first n_full
    tiles are whole prefix tiles (no masks), the rest of the n_tiles a partial tile and the drafts."""
    kv_len = gl.load(KVLens + b)
    ctx_len = kv_len - Q_LEN
    lo = split * split_len
    hi = gl.minimum(lo + split_len, kv_len)
    n_full = gl.maximum(gl.minimum(hi, ctx_len) - lo, 0) // BLOCK_N
    n_tiles = gl.cdiv(gl.maximum(hi - lo, 0), BLOCK_N)
    return ctx_len, lo, hi, n_full, n_tiles


@gluon.jit
def _softmax_tile(s, i, n_full, start, hi, ctx_len, bits, qk_scale, m_i, l_i, o, p_s, o_layout: gl.constexpr,
                  BLOCK_N: gl.constexpr):
    """Fold tile i's scores into (m, l), rescale O, and put P in shared memory for the PV MMA.
    Tiles past the whole prefix ones are masked: bounds, and the draft tree for draft tokens."""
    qk = s * qk_scale
    if i >= n_full:
        qk = gl.where(_visible(bits, start, hi, ctx_len, BLOCK_N), qk, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(qk, 1))
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)  # a row that has seen nothing yet
    alpha = gl.exp2(m_i - m_safe)
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
    _launch_dependents()  # the combine (a PDL launch) may be scheduled as SMs free up
    mb = gl.program_id(0)
    split = gl.program_id(1)
    b = gl.program_id(2)
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


@gluon.jit
def _issue_parts(KLat, KPe, PageTable, page_base, start, bars, base: gl.constexpr, klat_buf, kpe_buf,
                 PAGE_SIZE: gl.constexpr, PARTS: gl.constexpr):
    """TMA one whole-page tile in PARTS slices of the latent dims, a barrier each (KLat's box is one
    slice wide); the rope dims come with the last slice."""
    page = gl.load(PageTable + page_base + start // PAGE_SIZE)
    row0 = page * PAGE_SIZE + start % PAGE_SIZE
    W_: gl.constexpr = KLat.block_type.shape[1]
    for k in gl.static_range(PARTS - 1):
        mbarrier.expect(bars.index(base + k), KLat.block_type.nbytes)
        _tma_load(KLat, [row0, k * W_], bars.index(base + k), klat_buf.slice(k * W_, W_, dim=1))
    last = bars.index(base + PARTS - 1)
    mbarrier.expect(last, KLat.block_type.nbytes + KPe.block_type.nbytes)
    _tma_load(KLat, [row0, (PARTS - 1) * W_], last, klat_buf.slice((PARTS - 1) * W_, W_, dim=1))
    _tma_load(KPe, [row0, 0], last, kpe_buf)


@gluon.jit
def _gather_landed(KV, PageTable, page_base, start, hi, klat_buf, kpe_buf, full_bar, PAGE_SIZE: gl.constexpr,
                   D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr):
    """A seesaw warpgroup's cp.async gather of its tile, waited for and visible to the MMAs; with a
    tail warpgroup (TAIL_M), announced on the buffer's last full barrier, which the tail waits on."""
    _gather_tile(KV, PageTable, page_base, start, hi, klat_buf, kpe_buf, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, 4)
    async_copy.wait_group(0)
    _landed()
    if TAIL_M > 0:
        mbarrier.arrive(full_bar, count=1)


@gluon.jit
def _half_out(o, buf, PartO, split, total_rows, b, mb, W: gl.constexpr, M: gl.constexpr, BLOCK_M: gl.constexpr,
              D_LATENT: gl.constexpr):
    """Main warpgroup W's normalised half of the block's partial output, through shared memory `buf`
    (a tile buffer no one reads any more), 64 columns at a time: no thread holds an address per
    register of O."""
    HALF: gl.constexpr = D_LATENT // 2
    o_s = _reinterpret(buf, gl.float32, [BLOCK_M, HALF],
                       gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0]))
    o_s.store(o)
    _barrier()
    blk_o: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[2, 16], warps_per_cta=[4, 1],
                                           order=[1, 0])
    rows_o = mb * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, blk_o))
    o_ptr = PartO + ((split * total_rows + b * M + rows_o).to(gl.int64) * D_LATENT)[:, None] + W * HALF + \
        gl.arange(0, 64, layout=gl.SliceLayout(0, blk_o))[None, :]
    for c in gl.static_range(HALF // 64):
        chunk = o_s.slice(c * 64, 64, dim=1).load(blk_o)
        gl.store(o_ptr + c * 64, chunk.to(PartO.dtype.element_ty), mask=(rows_o < M)[:, None])


@gluon.jit
def _tail_out(o, m_i, l_i, rows, PartO, PartLse, split, total_rows, b, M: gl.constexpr, D_LATENT: gl.constexpr):
    """The tail rows' partial output (O^T, normalised here) and log-sum-exp."""
    out_rows = b * M + rows
    lse = gl.where(l_i > 0, (m_i + gl.log2(l_i)) * _LN2, float("-inf"))
    gl.store(PartLse + split * total_rows + out_rows, lse, mask=rows < M)
    o = o / gl.where(l_i > 0, l_i, 1.0)[None, :]
    dims = gl.arange(0, D_LATENT, layout=gl.SliceLayout(1, o.type.layout))
    ptr = PartO + ((split * total_rows + out_rows).to(gl.int64) * D_LATENT)[None, :] + dims[:, None]
    gl.store(ptr, o.to(PartO.dtype.element_ty), mask=(rows < M)[None, :])


# --- the warp-specialised ("seesaw") schedule -------------------------------------------------
# Two warpgroups, each its own partition: warpgroup W scores the even (W=0) or odd (W=1) tiles
# with full 64-token MMAs (N=64 instead of 32 per warpgroup: a third less shared-memory traffic
# for Q K^T), they swap row maxima and P through shared memory, and each accumulates its half of
# O's 512 columns from both tiles of a pair. P goes into its tile's rope rows, free once scored.
# One buffer per warpgroup (Q and two 72 KB tiles fill the shared memory): a warpgroup's next tile
# is loaded once both warpgroups are done with its buffer (empty barrier, count 2).

@gluon.jit
def _seesaw(W: gl.constexpr, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
            page_base, lo, hi, ctx_len, n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, full_bars, empty_bars,
            max_bars, p_bars, ts_bars, max0, max1, PARTS: gl.constexpr, HEADS: gl.constexpr,
            Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
            BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr):
    """Warpgroup W's side of the seesaw schedule (see the kernel below), from its first tile to its
    half of the split's partial output. With TAIL_M, a third warpgroup (_seesaw_tail) reads the
    same tiles: a gathered tile is announced on its buffer's last full barrier, P waits until the
    tail has scored the rope rows, and a buffer is free once all three are done with it."""
    M: gl.constexpr = Q_LEN * HEADS
    HALF: gl.constexpr = D_LATENT // 2
    GATHER: gl.constexpr = PAGE_SIZE < BLOCK_N
    rows, s_zero, m_i, l_i, o, bits = _main_start(TreeMask, b, mb, HEADS, Q_LEN, D_LATENT, BLOCK_M, BLOCK_N)
    if W == 0:
        my_max, other_max = max0, max1
    else:
        my_max, other_max = max1, max0
    for j in range(gl.cdiv(n_tiles, 2)):
        t = 2 * j + W
        start = lo + t * BLOCK_N
        # A zero the compiler cannot see is one: the buffers indexed with it get their MMA
        # descriptors rebuilt per pair instead of ~70 hoisted 64-bit values (which spill).
        z = j >> 30
        my_k, my_pe = klat_s.index(W + z), kpe_s.index(W + z)
        other_k, other_p = klat_s.index(1 - W + z), kpe_s.index(1 - W + z)
        ql, qp = q_lat_s.index(z), q_pe_s.index(z)
        if j > 0:  # both warpgroups are done with this buffer's previous tile (scores, P, both PVs)
            mbarrier.wait(empty_bars.index(W), (j - 1) & 1)
        if GATHER:  # pages smaller than a tile: every tile through the page table
            _gather_landed(KV, PageTable, page_base, start, hi, my_k, my_pe, full_bars.index(W * PARTS + PARTS - 1),
                           PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, TAIL_M)
        elif t < n_full:
            _issue_parts(KLat, KPe, PageTable, page_base, start, full_bars, W * PARTS, my_k, my_pe, PAGE_SIZE, PARTS)
        else:  # a partial tile, draft tokens, or past the end (all zeros: scores masked, P = 0)
            _gather_landed(KV, PageTable, page_base, start, hi, my_k, my_pe, full_bars.index(W * PARTS + PARTS - 1),
                           PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, TAIL_M)
        # Scores slice by slice of the latent dims, each as soon as its TMA has landed.
        PW: gl.constexpr = D_LATENT // PARTS
        s = warpgroup_mma_init(s_zero)
        for k in gl.static_range(PARTS):
            if not GATHER:
                if t < n_full:
                    mbarrier.wait(full_bars.index(W * PARTS + k), j & 1)
            s = warpgroup_mma(ql.slice(k * PW, PW, dim=1), my_k.slice(k * PW, PW, dim=1).permute((1, 0)), s,
                              use_acc=k > 0, is_async=True)
        s = warpgroup_mma(qp, my_pe.permute((1, 0)), s, is_async=True)
        s = warpgroup_mma_wait(0, deps=[s])
        qk = s * qk_scale
        if t >= n_full:
            qk = gl.where(_visible(bits, start, hi, ctx_len, BLOCK_N), qk, float("-inf"))
        mx = gl.max(qk, 1)
        my_max.store(mx)
        _barrier()
        mbarrier.arrive(max_bars.index(W), count=1)
        mbarrier.wait(max_bars.index(1 - W), j & 1)
        m_new = gl.maximum(m_i, gl.maximum(mx, other_max.load(m_i.type.layout)))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p = gl.exp2(qk - m_safe[:, None])
        l_i = l_i * alpha + gl.sum(p, 1)
        m_i = m_new
        if TAIL_M > 0:  # the tail warpgroup has scored this tile's rope rows too
            mbarrier.wait(ts_bars.index(W), j & 1)
        my_pe.store(p.to(my_pe.dtype))  # P into the rope rows: the score MMAs are done with them
        fence_async_shared()
        _barrier()
        mbarrier.arrive(p_bars.index(W), count=1)
        o = o * gl.convert_layout(alpha, gl.SliceLayout(1, o.type.layout))[:, None]
        acc = warpgroup_mma(my_pe, my_k.slice(W * HALF, HALF, dim=1), o, is_async=True)
        mbarrier.wait(p_bars.index(1 - W), j & 1)
        acc = warpgroup_mma(other_p, other_k.slice(W * HALF, HALF, dim=1), acc, is_async=True)
        o = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty_bars.index(W), count=1)
        mbarrier.arrive(empty_bars.index(1 - W), count=1)
    # The row sums of both halves of the tiles, then this warpgroup's half of O and (W=0) the LSE.
    # They go where the maxima went, through the P barriers, one phase past the last pair's: first
    # every reader of this buffer (the other warpgroup, the tail) is past the last pair, so that
    # none still waits for that pair's phase of a barrier this one arrives on again.
    n_pairs = gl.cdiv(n_tiles, 2)
    if n_pairs > 0:
        mbarrier.wait(empty_bars.index(W), (n_pairs - 1) & 1)
    my_max.store(l_i)
    _barrier()
    mbarrier.arrive(p_bars.index(W), count=1)
    mbarrier.wait(p_bars.index(1 - W), n_pairs & 1)
    l_all = l_i + other_max.load(m_i.type.layout)
    if W == 0:
        lse = gl.where(l_all > 0, (m_i + gl.log2(l_all)) * _LN2, float("-inf"))
        gl.store(PartLse + split * total_rows + b * M + rows, lse, mask=rows < M)
    o = o / gl.convert_layout(gl.where(l_all > 0, l_all, 1.0), gl.SliceLayout(1, o.type.layout))[:, None]
    # Out through this warpgroup's own tile buffer (no one reads it any more: see above).
    _half_out(o, klat_s.index(W), PartO, split, total_rows, b, mb, W, M, BLOCK_M, D_LATENT)


@gluon.jit
def _visible_t(bits, start, hi, ctx_len, BLOCK_N: gl.constexpr):
    """_visible transposed: the [BLOCK_N, rows] mask of the tile at `start`, tokens down."""
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, bits.type.layout.parent))
    j = pos - ctx_len
    shift = gl.minimum(gl.maximum(j, 0), 63).to(gl.int64)
    tree = ((bits[None, :] >> shift[:, None]) & 1) != 0
    return (pos < hi)[:, None] & ((j < 0)[:, None] | tree)


@gluon.jit
def _tail_scores(u: gl.constexpr, t, j, n_full, k_buf, pe_buf, qt_lat, qt_pe, full_bars, ts_bars, s_zero,
                 PARTS: gl.constexpr, GATHER: gl.constexpr):
    """S^T = K Q^T of the tile in buffer u for the tail rows (tokens on the MMA's M side, rows on
    its N side), slice by slice as the TMA lands; then the buffer's owner may overwrite the rope rows."""
    PW: gl.constexpr = qt_lat.shape[1] // PARTS
    s = warpgroup_mma_init(s_zero)
    for k in gl.static_range(PARTS):
        if GATHER:
            if k == 0:
                mbarrier.wait(full_bars.index(u * PARTS + PARTS - 1), j & 1)
        elif t < n_full:
            mbarrier.wait(full_bars.index(u * PARTS + k), j & 1)
        elif k == 0:  # a gathered tile: its warpgroup arrives on the last barrier once it has landed
            mbarrier.wait(full_bars.index(u * PARTS + PARTS - 1), j & 1)
        s = warpgroup_mma(k_buf.slice(k * PW, PW, dim=1), qt_lat.slice(k * PW, PW, dim=1).permute((1, 0)), s,
                          use_acc=k > 0, is_async=True)
    s = warpgroup_mma(pe_buf, qt_pe.permute((1, 0)), s, is_async=True)
    s = warpgroup_mma_wait(0, deps=[s])
    mbarrier.arrive(ts_bars.index(u), count=1)
    return s


@gluon.jit
def _seesaw_tail(Q, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                 n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars, empty_bars, ts_bars,
                 PARTS: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                 D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                 TAIL_M: gl.constexpr):
    """The rows past the last whole M block (at most TAIL_M, e.g. 72 = 64 + 8), in a third
    warpgroup, transposed so that nothing is padded to 64 rows: S^T = K Q^T has the tile's 64
    tokens on the MMA's M side and the TAIL_M rows on its N side (wgmma N = 8 is allowed), and
    O^T = V^T P^T the 512 latent dims on M. It reads both tiles of every pair from the seesaw's
    buffers; only the last M block's program stores its rows (the others keep the barriers going)."""
    M: gl.constexpr = Q_LEN * HEADS
    ROW0: gl.constexpr = M // BLOCK_M * BLOCK_M
    GATHER: gl.constexpr = PAGE_SIZE < BLOCK_N
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, TAIL_M, 16])
    col_l: gl.constexpr = gl.SliceLayout(0, s_layout)
    _tail_rows_in_smem(Q, b, qt_lat_s, qt_pe_s, ROW0, TAIL_M, M, D_LATENT, D_ROPE)
    rows = ROW0 + gl.arange(0, TAIL_M, layout=col_l)
    bits = _draft_bits(TreeMask, b, rows, HEADS, Q_LEN)
    s_zero = gl.zeros([BLOCK_N, TAIL_M], gl.float32, s_layout)
    m_i = gl.full([TAIL_M], float("-inf"), gl.float32, col_l)
    l_i = gl.zeros([TAIL_M], gl.float32, col_l)
    o = gl.zeros([D_LATENT, TAIL_M], gl.float32, s_layout)  # O^T
    for j in range(gl.cdiv(n_tiles, 2)):
        z = j >> 30  # as in _seesaw: descriptors rebuilt per pair, not hoisted
        k0, pe0, k1, pe1 = klat_s.index(z), kpe_s.index(z), klat_s.index(1 + z), kpe_s.index(1 + z)
        t0 = 2 * j
        s0 = _tail_scores(0, t0, j, n_full, k0, pe0, qt_lat_s.index(z), qt_pe_s.index(z), full_bars, ts_bars,
                          s_zero, PARTS, GATHER)
        s1 = _tail_scores(1, t0 + 1, j, n_full, k1, pe1, qt_lat_s.index(z), qt_pe_s.index(z), full_bars, ts_bars,
                          s_zero, PARTS, GATHER)
        qk0 = s0 * qk_scale
        qk1 = s1 * qk_scale
        start = lo + t0 * BLOCK_N
        if t0 + 1 >= n_full:
            qk0 = gl.where(_visible_t(bits, start, hi, ctx_len, BLOCK_N), qk0, float("-inf"))
            qk1 = gl.where(_visible_t(bits, start + BLOCK_N, hi, ctx_len, BLOCK_N), qk1, float("-inf"))
        m_new = gl.maximum(m_i, gl.maximum(gl.max(qk0, 0), gl.max(qk1, 0)))
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = gl.exp2(m_i - m_safe)
        p0 = gl.exp2(qk0 - m_safe[None, :])
        p1 = gl.exp2(qk1 - m_safe[None, :])
        l_i = l_i * alpha + gl.sum(p0, 0) + gl.sum(p1, 0)
        m_i = m_new
        o = o * alpha[None, :]
        # One P buffer (shared memory is full): tile 0's PV MMA retires before tile 1's P goes in.
        pt = pt_s.index(z)
        pt.store(gl.permute(p0.to(pt_s.dtype), (1, 0)))
        fence_async_shared()
        _barrier()
        o = warpgroup_mma(k0.permute((1, 0)), pt.permute((1, 0)), o)
        _barrier()
        pt.store(gl.permute(p1.to(pt_s.dtype), (1, 0)))
        fence_async_shared()
        _barrier()
        acc = warpgroup_mma(k1.permute((1, 0)), pt.permute((1, 0)), o, is_async=True)
        o = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty_bars.index(0), count=1)
        mbarrier.arrive(empty_bars.index(1), count=1)
    if mb == gl.num_programs(0) - 1:
        _tail_out(o, m_i, l_i, rows, PartO, PartLse, split, total_rows, b, M, D_LATENT)


@gluon.jit
def _gluon_seesaw_kernel(Q, KLat, KPe, KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len,
                         stride_pt, total_rows,
                         HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                         D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
                         BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr,
                         num_warps: gl.constexpr):
    """Grid (m_blocks, splits, batch), 4 + 4 warps: the seesaw schedule (see _seesaw); with TAIL_M,
    4 more for the rows past the last whole M block (see _seesaw_tail)."""
    _launch_dependents()  # the combine (a PDL launch) may be scheduled as SMs free up
    mb = gl.program_id(0)
    split = gl.program_id(1)
    b = gl.program_id(2)
    M: gl.constexpr = Q_LEN * HEADS
    q_lat_s, q_pe_s = _q_in_smem(Q, b, mb * BLOCK_M, BLOCK_M, M, D_LATENT, D_ROPE, num_warps)
    klat_s = gl.allocate_shared_memory(KLat.dtype, [2, BLOCK_N, D_LATENT], KLat.layout)
    kpe_s = gl.allocate_shared_memory(KPe.dtype, [2, BLOCK_N, D_ROPE], KPe.layout)
    vec_sl: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])
    # Each warpgroup's row maxima, then (after the loop) its row sums in the same place: a
    # warpgroup leaves the loop only after the other's last P, which that one stored after
    # reading these maxima.
    max0 = gl.allocate_shared_memory(gl.float32, [BLOCK_M], vec_sl)
    max1 = gl.allocate_shared_memory(gl.float32, [BLOCK_M], vec_sl)
    PARTS: gl.constexpr = D_LATENT // KLat.block_type.shape[1]  # a tile's latent dims arrive in PARTS slices
    full_bars = gl.allocate_shared_memory(gl.int64, [2 * PARTS, 1], mbarrier.MBarrierLayout())
    empty_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    max_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    p_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    ts_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # the tail has scored a buffer
    for k in gl.static_range(2):
        for q in gl.static_range(PARTS):
            mbarrier.init(full_bars.index(k * PARTS + q), count=1)
        mbarrier.init(empty_bars.index(k), count=3 if TAIL_M > 0 else 2)
        mbarrier.init(max_bars.index(k), count=1)
        mbarrier.init(p_bars.index(k), count=1)
        mbarrier.init(ts_bars.index(k), count=1)
    fence_async_shared()
    _barrier()

    ctx_len, lo, hi, n_full, n_tiles = _split_bounds(KVLens, b, split, split_len, Q_LEN, BLOCK_N)
    page_base = b * stride_pt
    # The same two main partitions either way (a tuple of their arguments would lose its constexprs).
    if TAIL_M > 0:
        qt_lat_s, qt_pe_s, pt_s = _tail_smem(Q, q_lat_s, q_pe_s, TAIL_M, BLOCK_N)
        gl.warp_specialize([
            (_seesaw, (0, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
                       page_base, lo, hi, ctx_len, n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, full_bars,
                       empty_bars, max_bars, p_bars, ts_bars, max0, max1, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT,
                       D_ROPE, BLOCK_M, BLOCK_N, TAIL_M)),
            (_seesaw, (1, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
                       page_base, lo, hi, ctx_len, n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, full_bars,
                       empty_bars, max_bars, p_bars, ts_bars, max0, max1, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT,
                       D_ROPE, BLOCK_M, BLOCK_N, TAIL_M)),
            (_seesaw_tail, (Q, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                            n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars, empty_bars, ts_bars, PARTS,
                            HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N, TAIL_M)),
        ], [4, 4], [TAIL_REGS[0], TAIL_REGS[1]])
    else:
        gl.warp_specialize([
            (_seesaw, (0, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
                       page_base, lo, hi, ctx_len, n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, full_bars,
                       empty_bars, max_bars, p_bars, ts_bars, max0, max1, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT,
                       D_ROPE, BLOCK_M, BLOCK_N, TAIL_M)),
            (_seesaw, (1, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
                       page_base, lo, hi, ctx_len, n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, full_bars,
                       empty_bars, max_bars, p_bars, ts_bars, max0, max1, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT,
                       D_ROPE, BLOCK_M, BLOCK_N, TAIL_M)),
        ], [4], [240])


_DESCRIPTORS: OrderedDict = OrderedDict()  # the last few caches' descriptors (building them costs host time)


def descriptors(inp: VerifyInputs, block_n: int, lat_cols: int | None = None) -> tuple[TensorDescriptor, TensorDescriptor]:
    """TMA descriptors of the KV cache's latent and rope parts, one BLOCK_N-token box each, the
    latent box `lat_cols` wide (default: all of it); kept for the last 4 caches."""
    w, kv = inp.workload, inp.kv_cache
    lat_cols = lat_cols or w.v_dim
    key = (kv.data_ptr(), tuple(kv.shape), tuple(kv.stride()), kv.dtype, kv.device, w.v_dim, w.rope_dim, block_n,
           lat_cols)
    hit = _DESCRIPTORS.get(key)
    if hit is None:
        kv2d = kv.view(-1, w.head_dim)
        gdt = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[kv2d.dtype]
        lat = gl.NVMMASharedLayout.get_default_for([block_n, lat_cols], gdt)
        pe = gl.NVMMASharedLayout.get_default_for([block_n, w.rope_dim], gdt)
        hit = _DESCRIPTORS[key] = (
            TensorDescriptor(kv2d, [kv2d.shape[0], w.v_dim], [w.head_dim, 1], [block_n, lat_cols], lat),
            TensorDescriptor(kv2d[:, w.v_dim:], [kv2d.shape[0], w.rope_dim], [w.head_dim, 1], [block_n, w.rope_dim],
                             pe))
        while len(_DESCRIPTORS) > 4:
            _DESCRIPTORS.popitem(last=False)
    return hit


def launch_gluon_split(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor) -> None:
    """Launch the Gluon split kernel (either schedule) as kernels.launch.fast_specs planned it."""
    seesaw = spec.name in ("_gluon_seesaw_kernel", "_gluon_ring_kernel")  # tiles in slices of the latent dims
    k_lat, k_pe = descriptors(inp, spec.constexprs["BLOCK_N"], SEESAW_SLICE if seesaw else None)
    if spec.name == "_gluon_ring_kernel":
        from kernels.triton_mla_fast_ring import _gluon_ring_kernel as kernel
    else:
        kernel = _gluon_seesaw_kernel if seesaw else _gluon_split_kernel
    kernel[spec.grid](
        inp.q, k_lat, k_pe, inp.kv_cache, inp.page_table, inp.kv_lens, inp.tree_mask, part_o, part_lse,
        inp.sm_scale * LOG2E, spec.int_args["split_len"], inp.page_table.stride(0), spec.int_args["total_rows"],
        **spec.constexprs)  # num_warps among them: the launch option and the kernel's constexpr
