"""triton_mla_fast's ring schedule on sm_90 (Gluon), for 64-row M blocks plus a tail of up to 8 rows
(72 = 9 draft tokens x 8 heads): `_gluon_ring_kernel`, launched like `_gluon_seesaw_kernel` (the same
arguments and TMA descriptors, kernels/fast/gluon.py) where `ring=True`.

The seesaw kernel works on pairs of tiles: both tile buffers are loaded together and released together,
so the next pair's loads wait for all of this pair's math. Here tile t goes to buffer t % 2 and the
buffer is refilled with tile t + 2 as soon as tile t's readers are done with it, so one tile loads
while the other is worked on:

- two main warpgroups (W = 0, 1) own O's columns [256 W, 256 W + 256) for the block's 64 rows; warpgroup
  t % 2 scores tile t (S = Q K^T, 64 x 64), folds it into the running row maxima (the other one posted
  the previous tile's) and puts P (in the tile's rope rows, once the tail has scored them) and the new
  maxima in shared memory; both then accumulate their half of P V;
- the tail warpgroup does the rows past the last whole block transposed, as in the seesaw kernel
  (S^T = K Q^T, O^T += V^T P^T, N = 8), and is the producer: it issues every load, each as soon as
  all three warpgroups are done with the buffer it goes to.

A tile's latent dims arrive in SEESAW_SLICE-wide TMA slices, a barrier each (the rope dims with the
last). Tiles past the whole prefix ones (the partial tile, the draft tokens) and pages smaller than a
tile are gathered by cp.async through the page table. With ASYNC_GATHER (the default, async_gather)
the copies themselves complete the tile's barriers (cp.async.mbarrier.arrive), each reader fences
before its MMAs read the tile, and at pages smaller than a tile the tail loads tile t + 2's page-table
entries while it works on tile t; without it the tail waits for a gather one tile later and
announces it.

tests/ring_protocol.py models these waits and arrivals and searches them for deadlocks
(tests/kernels/test_ring_protocol.py runs it): change the two together.

Removal experiments (roofline/pipelines/removal_experiment.py): NO_MMA, NO_SOFTMAX and NO_GATHER (config fields no_mma,
no_softmax, no_gather; off by default, the code compiled then is the kernel's own) leave out every MMA,
the online softmax (P = the raw scores, O not rescaled), or the cp.async gathers' copies (their
barriers still complete); the results are wrong on purpose, the loads and barriers stay.
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
from kernels.fast.common import SEESAW_SLICE
from kernels.fast.gluon import (
    _barrier,
    _gather_rows,
    _gather_tile,
    _half_out,
    _landed,
    _main_start,
    _max_shift,
    _mma,
    _post_pt,
    _softmax_step,
    _sum_rows,
    _tail_out,
    _tail_rows_in_smem,
    _tail_start,
    _tile_pages,
    _tile_scores,
    _tma_load,
    _visible_t,
)
from kernels.fast.program import _main_smem, _span, _start_program, _tail_smem
from kernels.fast.timeline import stamp, stamp_end, stamp_head, stamp_start
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec

# setmaxnreg of the second main warpgroup and of the tail one (the first gets what is left), as the
# seesaw kernel's tail; at (184, 136) ptxas spilled 1.9 KB (triton 3.6, sm_90).
RING_REGS = gl.constexpr((200, 112))


@gluon.jit
def _gathered(t, n_full, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """Whether tile t comes by cp.async gather (pages smaller than a tile, or past the whole prefix tiles)."""
    return (PAGE_SIZE < BLOCK_N) | (t >= n_full)


@gluon.jit
def _load_tile(t, KLat, KPe, KV, PageTable, page_base, lo, hi, n_full, klat_s, kpe_s, full_bars, PARTS: gl.constexpr,
               PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr,
               NO_GATHER: gl.constexpr):
    """Tile t into buffer t % 2: by TMA in PARTS slices of the latent dims, a barrier each (the rope dims
    with the last); or a cp.async gather (one commit group) that the caller later waits for and
    announces (_announce). NO_GATHER: no gather copies (the tile's barriers complete all the same)."""
    buf = t % 2
    start = lo + t * BLOCK_N
    if _gathered(t, n_full, PAGE_SIZE, BLOCK_N):
        if not NO_GATHER:
            _gather_tile(KV, PageTable, page_base, start, hi, klat_s.index(buf), kpe_s.index(buf), PAGE_SIZE,
                         D_LATENT, D_ROPE, BLOCK_N, 4)
    else:
        page = gl.load(PageTable + page_base + start // PAGE_SIZE)
        row0 = page * PAGE_SIZE + start % PAGE_SIZE
        W_: gl.constexpr = KLat.block_type.shape[1]
        for k in gl.static_range(PARTS):
            bar = full_bars.index(buf * PARTS + k)
            if k == PARTS - 1:
                mbarrier.expect(bar, KLat.block_type.nbytes + KPe.block_type.nbytes)
                _tma_load(KPe, [row0, 0], bar, kpe_s.index(buf))
            else:
                mbarrier.expect(bar, KLat.block_type.nbytes)
            _tma_load(KLat, [row0, k * W_], bar, klat_s.index(buf).slice(k * W_, W_, dim=1))


@gluon.jit
def _announce(t, n_full, full_bars, PARTS: gl.constexpr, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """If tile t was gathered: wait for this warpgroup's copies, make them visible to the MMAs, and
    arrive on the tile's barriers (which a TMA'd tile's bytes complete)."""
    if _gathered(t, n_full, PAGE_SIZE, BLOCK_N):
        async_copy.wait_group(0)
        _landed()
        for k in gl.static_range(PARTS):
            mbarrier.arrive(full_bars.index((t % 2) * PARTS + k), count=1)


@gluon.jit
def _arrive_when_copied(t, n_full, full_bars, PARTS: gl.constexpr, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """ASYNC_GATHER: if tile t was gathered, its barriers complete when this warpgroup's copies land
    (cp.async.mbarrier.arrive), without the producer waiting for them; its readers fence (_seen)."""
    if _gathered(t, n_full, PAGE_SIZE, BLOCK_N):
        for k in gl.static_range(PARTS):
            async_copy.mbarrier_arrive(full_bars.index((t % 2) * PARTS + k))
        _barrier()  # every thread's tracked arrive is in before the one that completes the count
        for k in gl.static_range(PARTS):
            mbarrier.arrive(full_bars.index((t % 2) * PARTS + k), count=1)


@gluon.jit
def _seen(t, n_full, ASYNC_GATHER: gl.constexpr, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """A reader of tile t, after the barrier that says it landed: with ASYNC_GATHER a gathered tile's
    copies (generic proxy) are made visible to this warpgroup's MMAs (async proxy) here."""
    if ASYNC_GATHER:
        if _gathered(t, n_full, PAGE_SIZE, BLOCK_N):
            fence_async_shared()


@gluon.jit
def _slice_landed(full_bars, u, k, t, n_full, PARTS: gl.constexpr, ASYNC_GATHER: gl.constexpr,
                  PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """Wait for latent slice k of tile t (in buffer u); after the first, make a gathered tile's copies visible."""
    mbarrier.wait(full_bars.index(u * PARTS + k), (t // 2) & 1)
    if k == 0:
        _seen(t, n_full, ASYNC_GATHER, PAGE_SIZE, BLOCK_N)


@gluon.jit
def _ring_main(W: gl.constexpr, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len,
               n_full, n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, m0_s, m1_s, full_bars, empty_bars, ts_bars, p_bar,
               sum_bar, PARTS: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr, D_LATENT: gl.constexpr,
               BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, PAGE_SIZE: gl.constexpr, ASYNC_GATHER: gl.constexpr,
               NO_MMA: gl.constexpr, NO_SOFTMAX: gl.constexpr, Out, ITEMS: gl.constexpr, Items, Stamps,
               STAMP_TILES: gl.constexpr):
    """Main warpgroup W: scores the tiles t with t % 2 == W, and accumulates its half of O from every tile.
    Stamps, STAMP_TILES: the in-kernel timeline (kernels/fast/timeline.py; off at 0)."""
    stamp_start(Stamps, W, STAMP_TILES)
    M: gl.constexpr = Q_LEN * HEADS
    HALF: gl.constexpr = D_LATENT // 2
    PW: gl.constexpr = D_LATENT // PARTS
    rows, s_zero, m_i, l_i, o, bits = _main_start(TreeMask, b, mb, HEADS, Q_LEN, D_LATENT, BLOCK_M, BLOCK_N)
    stamp_head(Stamps, W, 3, STAMP_TILES)
    for t in range(n_tiles):
        u = t % 2
        z = t >> 30  # an opaque zero: MMA descriptors rebuilt per tile, not hoisted (they spill)
        kb, pe = klat_s.index(u + z), kpe_s.index(u + z)
        if u == W:  # this warpgroup scores tile t, slice by slice as the TMA lands
            s = warpgroup_mma_init(s_zero)
            for k in gl.static_range(PARTS):
                _slice_landed(full_bars, u, k, t, n_full, PARTS, ASYNC_GATHER, PAGE_SIZE, BLOCK_N)
                s = _mma(q_lat_s.index(z).slice(k * PW, PW, dim=1), kb.slice(k * PW, PW, dim=1).permute((1, 0)), s,
                         k > 0, NO_MMA)
            stamp(Stamps, W, t, 0, STAMP_TILES)
            s = _mma(q_pe_s.index(z), pe.permute((1, 0)), s, True, NO_MMA)
            s = warpgroup_mma_wait(0, deps=[s])
            stamp(Stamps, W, t, 1, STAMP_TILES)
            qk = _tile_scores(s, qk_scale, t, n_full, bits, lo, hi, ctx_len, BLOCK_N)
            if NO_SOFTMAX:
                m_new = m_i
                p = qk
            else:
                m_new = gl.maximum(m_i, gl.max(qk, 1))
                p, alpha, l_i = _softmax_step(qk, m_i, m_new, l_i)
            stamp(Stamps, W, t, 2, STAMP_TILES)
            mbarrier.wait(ts_bars.index(u), (t // 2) & 1)  # the tail has scored the rope rows P goes into
            stamp(Stamps, W, t, 3, STAMP_TILES)
            pe.store(p.to(pe.dtype))
            m0_s.store(m_new)  # read by the other warpgroup before it scores (and writes) the next tile
            fence_async_shared()
            _barrier()
            mbarrier.arrive(p_bar, count=1)
            stamp(Stamps, W, t, 4, STAMP_TILES)
        else:  # the other warpgroup scored it: its maxima and P are posted
            mbarrier.wait(p_bar, t & 1)
            stamp(Stamps, W, t, 5, STAMP_TILES)
            _seen(t, n_full, ASYNC_GATHER, PAGE_SIZE, BLOCK_N)  # (the scorer waited for its barriers)
            m_new = m0_s.load(m_i.type.layout)
            if not NO_SOFTMAX:
                m_safe, alpha = _max_shift(m_i, m_new)
                l_i = l_i * alpha
        m_i = m_new
        if not NO_SOFTMAX:
            o = o * gl.convert_layout(alpha, gl.SliceLayout(1, o.type.layout))[:, None]
        if not NO_MMA:
            acc = warpgroup_mma(pe, kb.slice(W * HALF, HALF, dim=1), o, is_async=True)
            o = warpgroup_mma_wait(0, deps=[acc])
        stamp(Stamps, W, t, 6, STAMP_TILES)
        mbarrier.arrive(empty_bars.index(u), count=1)
    stamp_head(Stamps, W, 4, STAMP_TILES)
    # Row sums: each warpgroup summed the tiles it scored (rescaled at every tile); swap them (the
    # maxima's buffer is free: its last reader read it before its last PV, before this point).
    if n_tiles > 0:  # the other warpgroup has read the last maxima (its last PV is done)
        mbarrier.wait(empty_bars.index((n_tiles - 1) % 2), ((n_tiles - 1) // 2) & 1)
    o = _sum_rows(W, o, m_i, l_i, m0_s, m1_s, sum_bar, sum_bar, 0, rows, PartLse, split, total_rows, b, M, ITEMS, Items)
    # Out through tile buffer W once its last tile's readers are done.
    if n_tiles > W:
        last = W + (n_tiles - 1 - W) // 2 * 2  # the last tile in buffer W
        mbarrier.wait(empty_bars.index(W), (last // 2) & 1)
    _half_out(o, klat_s.index(W), PartO, split, total_rows, b, mb, W, M, BLOCK_M, D_LATENT, Out, ITEMS, Items)
    stamp_end(Stamps, W, n_tiles, STAMP_TILES)


@gluon.jit
def _ring_tail(Q, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
               page_base, lo, hi, ctx_len, n_full, n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars,
               empty_bars, ts_bars, PARTS: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr,
               PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr,
               BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr, ASYNC_GATHER: gl.constexpr, NO_MMA: gl.constexpr,
               NO_SOFTMAX: gl.constexpr, NO_GATHER: gl.constexpr, Out, ITEMS: gl.constexpr, Items,
               TAIL_ROWS: gl.constexpr, Stamps, STAMP_TILES: gl.constexpr):
    """The producer, and the rows past the last whole M block (at most TAIL_M) transposed: S^T = K Q^T
    (tokens on the MMA's M side, rows on N), O^T += V^T P^T (latent dims on M). Only the last M
    block's program stores its rows. Without TAIL_ROWS (rows in whole M blocks, ring_whole: 64 heads, or in
    padded ones, ring_padded) it only loads: it posts each tile's ts barrier at once and computes nothing."""
    M: gl.constexpr = Q_LEN * HEADS
    ROW0: gl.constexpr = M // BLOCK_M * BLOCK_M
    HAS_ROWS: gl.constexpr = TAIL_ROWS
    PW: gl.constexpr = D_LATENT // PARTS
    stamp_start(Stamps, 2, STAMP_TILES)
    for v in gl.static_range(2):  # the first two tiles
        if v < n_tiles:
            _load_tile(v, KLat, KPe, KV, PageTable, page_base, lo, hi, n_full, klat_s, kpe_s, full_bars, PARTS,
                       PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, NO_GATHER)
            if ASYNC_GATHER:
                _arrive_when_copied(v, n_full, full_bars, PARTS, PAGE_SIZE, BLOCK_N)
    if HAS_ROWS:
        _tail_rows_in_smem(Q, b, qt_lat_s, qt_pe_s, ROW0, TAIL_M, M, D_LATENT, D_ROPE)
    if not ASYNC_GATHER:
        for v in gl.static_range(2):
            if v < n_tiles:
                _announce(v, n_full, full_bars, PARTS, PAGE_SIZE, BLOCK_N)
    rows, bits, s_zero, m_i, l_i, o = _tail_start(TreeMask, b, ROW0, HEADS, Q_LEN, D_LATENT, BLOCK_N, TAIL_M)
    # With ASYNC_GATHER at pages smaller than a tile, tile t + 2's page-table entries are loaded while
    # tile t is worked on, not when its buffer frees up.
    PREFETCH: gl.constexpr = ASYNC_GATHER and PAGE_SIZE < BLOCK_N
    stamp_head(Stamps, 2, 3, STAMP_TILES)
    for t in range(n_tiles):
        u = t % 2
        z = t >> 30
        kb, pe = klat_s.index(u + z), kpe_s.index(u + z)
        qt_lat = qt_lat_s.index(z)
        if PREFETCH:
            pages_next = _tile_pages(PageTable, page_base, lo + (t + 2) * BLOCK_N, hi, PAGE_SIZE, BLOCK_N, 4)
        if HAS_ROWS:
            s = warpgroup_mma_init(s_zero)
            for k in gl.static_range(PARTS):
                _slice_landed(full_bars, u, k, t, n_full, PARTS, ASYNC_GATHER, PAGE_SIZE, BLOCK_N)
                s = _mma(kb.slice(k * PW, PW, dim=1), qt_lat.slice(k * PW, PW, dim=1).permute((1, 0)), s, k > 0,
                         NO_MMA)
            stamp(Stamps, 2, t, 0, STAMP_TILES)
            s = _mma(pe, qt_pe_s.index(z).permute((1, 0)), s, True, NO_MMA)
            s = warpgroup_mma_wait(0, deps=[s])
            stamp(Stamps, 2, t, 1, STAMP_TILES)
        mbarrier.arrive(ts_bars.index(u), count=1)  # the scorer may overwrite the rope rows with P
        if not ASYNC_GATHER:
            if t >= 1:  # tile t + 1, gathered one tile ago, has landed by now
                if t + 1 < n_tiles:
                    _announce(t + 1, n_full, full_bars, PARTS, PAGE_SIZE, BLOCK_N)
        if HAS_ROWS:
            qk = s * qk_scale
            if t >= n_full:
                qk = gl.where(_visible_t(bits, lo + t * BLOCK_N, hi, ctx_len, BLOCK_N), qk, float("-inf"))
            if NO_SOFTMAX:
                p = qk
            else:
                m_new = gl.maximum(m_i, gl.max(qk, 0))
                m_safe, alpha = _max_shift(m_i, m_new)
                p = gl.exp2(qk - m_safe[None, :])
                l_i = l_i * alpha + gl.sum(p, 0)
                m_i = m_new
                o = o * alpha[None, :]
            stamp(Stamps, 2, t, 2, STAMP_TILES)
            pt = pt_s.index(z)
            _post_pt(pt, p)
            if not NO_MMA:
                acc = warpgroup_mma(kb.permute((1, 0)), pt.permute((1, 0)), o, is_async=True)
                o = warpgroup_mma_wait(0, deps=[acc])
            stamp(Stamps, 2, t, 3, STAMP_TILES)
        # This buffer: tile t + 2 once both main warpgroups are done with tile t too.
        mbarrier.arrive(empty_bars.index(u), count=1)
        if t + 2 < n_tiles:
            mbarrier.wait(empty_bars.index(u), (t // 2) & 1)
            stamp(Stamps, 2, t, 4, STAMP_TILES)
            if PREFETCH:
                if not NO_GATHER:
                    _gather_rows(KV, pages_next, lo + (t + 2) * BLOCK_N, hi, klat_s.index(u), kpe_s.index(u),
                                 PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, 4)
            else:
                _load_tile(t + 2, KLat, KPe, KV, PageTable, page_base, lo, hi, n_full, klat_s, kpe_s, full_bars,
                           PARTS, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, NO_GATHER)
            if ASYNC_GATHER:
                _arrive_when_copied(t + 2, n_full, full_bars, PARTS, PAGE_SIZE, BLOCK_N)
            stamp(Stamps, 2, t, 5, STAMP_TILES)
    stamp_head(Stamps, 2, 4, STAMP_TILES)
    if HAS_ROWS:
        _tail_out(o, m_i, l_i, rows, PartO, PartLse, split, total_rows, b, mb, M, D_LATENT, Out, ITEMS, Items)
    stamp_end(Stamps, 2, n_tiles, STAMP_TILES)


@gluon.jit
def _gluon_ring_kernel(Q, KLat, KPe, args, HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                       D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                       TAIL_M: gl.constexpr, num_warps: gl.constexpr, ASYNC_GATHER: gl.constexpr,
                       NO_MMA: gl.constexpr, NO_SOFTMAX: gl.constexpr, NO_GATHER: gl.constexpr, ITEMS: gl.constexpr,
                       TAIL_ROWS: gl.constexpr, Stamps=None, STAMP_TILES: gl.constexpr = 0):
    """Grid (m_blocks, splits, batch), 3 x 4 warps: two main warpgroups and the tail one (see the module).
    `args`: the rest of the launch's arguments, one tuple (kernels.fast.paths.SPLIT_ARGS).
    ASYNC_GATHER: gathered tiles complete their barriers as their copies land, instead of the tail
    waiting for them one tile later. NO_MMA, NO_SOFTMAX, NO_GATHER: removal experiments (see the module).
    ITEMS: the batch schedule's grid (m_blocks, items), as the seesaw kernel's (Items, Out: None without it).
    TAIL_ROWS: the tail warpgroup computes the rows past the last whole block (else every row is in the main
    warpgroups' M blocks, whole or padded, and it only loads). Stamps, STAMP_TILES: the in-kernel timeline
    (kernels/fast/timeline.py; off at 0)."""
    KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len, stride_pt, total_rows, Items, Out = args
    mb, split, b, item = _start_program(Items, Stamps, BLOCK_N, ITEMS, STAMP_TILES)
    # m0_s: the row maxima, at the end W=0's row sums; m1_s: at the end W=1's row sums; kpe_s then the main rows' P
    q_lat_s, q_pe_s, klat_s, kpe_s, m0_s, m1_s = _main_smem(Q, KLat, KPe, b, mb, HEADS, Q_LEN, D_LATENT, D_ROPE,
                                                            BLOCK_M, BLOCK_N, num_warps)
    qt_lat_s, qt_pe_s, pt_s = _tail_smem(Q, q_lat_s, q_pe_s, TAIL_M, BLOCK_N)
    PARTS: gl.constexpr = D_LATENT // KLat.block_type.shape[1]
    full_bars = gl.allocate_shared_memory(gl.int64, [2 * PARTS, 1], mbarrier.MBarrierLayout())
    empty_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    ts_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # the tail has scored a buffer
    misc = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    p_bar, sum_bar = misc.index(0), misc.index(1)
    for k in gl.static_range(2 * PARTS):
        mbarrier.init(full_bars.index(k), count=1)
    for k in gl.static_range(2):
        mbarrier.init(empty_bars.index(k), count=3)  # both main warpgroups and the tail
        mbarrier.init(ts_bars.index(k), count=1)
    mbarrier.init(p_bar, count=1)  # a tile's scorer has posted P and the maxima
    mbarrier.init(sum_bar, count=2)  # both main warpgroups have posted their row sums
    fence_async_shared()
    _barrier()

    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = _span(
        KVLens, b, mb, split, item, split_len, stride_pt, total_rows, Q_LEN, BLOCK_N, ITEMS)
    gl.warp_specialize([
        (_ring_main, (0, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                      n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, m0_s, m1_s, full_bars, empty_bars, ts_bars, p_bar,
                      sum_bar, PARTS, HEADS, Q_LEN, D_LATENT, BLOCK_M, BLOCK_N, PAGE_SIZE, ASYNC_GATHER, NO_MMA,
                      NO_SOFTMAX, Out, ITEMS, Items, Stamps, STAMP_TILES)),
        (_ring_main, (1, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                      n_tiles, q_lat_s, q_pe_s, klat_s, kpe_s, m0_s, m1_s, full_bars, empty_bars, ts_bars, p_bar,
                      sum_bar, PARTS, HEADS, Q_LEN, D_LATENT, BLOCK_M, BLOCK_N, PAGE_SIZE, ASYNC_GATHER, NO_MMA,
                      NO_SOFTMAX, Out, ITEMS, Items, Stamps, STAMP_TILES)),
        (_ring_tail, (Q, KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows,
                      page_base, lo, hi, ctx_len, n_full, n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars,
                      empty_bars, ts_bars, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N,
                      TAIL_M, ASYNC_GATHER, NO_MMA, NO_SOFTMAX, NO_GATHER, Out, ITEMS, Items, TAIL_ROWS, Stamps,
                      STAMP_TILES)),
    ], [4, 4], [RING_REGS[0], RING_REGS[1]])


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
           items: torch.Tensor | None = None, out: torch.Tensor | None = None, stamps=None) -> None:
    """Launch `_gluon_ring_kernel` as kernels.fast.paths planned `spec` (latent tiles in slices; items, out: the
    batch schedule's; stamps: kernels.fast.timeline's buffer and tile count, or None)."""
    common.launch(_gluon_ring_kernel, inp, spec, part_o, part_lse, SEESAW_SLICE, items, out, stamps)
