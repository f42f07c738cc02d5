"""triton_mla_fast's Gluon seesaw kernel (sm_90, `path="gluon", ring=False`; with 64-row blocks
and no tail, the default): `_gluon_seesaw_kernel`.

Two warpgroups, each its own partition (`gl.warp_specialize`). Warpgroup W scores tiles 2j+W with
full-width 64x64 wgmma, the two swap row maxima and P through shared memory, and each accumulates
its half of O's 512 columns from both tiles of a pair. A tile's latent dims arrive by TMA in
SEESAW_SLICE-wide slices, a barrier each, so scoring starts on the first slice while the rest lands.
With TAIL_M (8), the rows past the last whole M block (72 = 64 + 8) go to a third warpgroup that
reads the same tiles transposed (`_seesaw_tail`) instead of to a second, padded 64-row block. With
that tail, `ring=True` (the default) launches the per-tile variant of this schedule instead
(kernels/fast/ring.py). With STAGGER (`stagger=True`, the default where the rows are whole 64-row
blocks and pages hold whole tiles) its two warpgroups run FlashMLA's order of work instead
(kernels/fast/stagger.py), which has the same removal experiments. Shared pieces: kernels/fast/gluon.py.

Removal experiments (roofline/pipelines/removal_experiment.py), as the ring kernel's: NO_MMA, NO_SOFTMAX and NO_GATHER
(config fields no_mma, no_softmax, no_gather; off by default, the code compiled then is the kernel's
own) leave out every warpgroup MMA (scores and P V, main and tail warpgroups), the online softmax (P =
the raw scaled scores; no row maxima, so no exchange of them between the warpgroups, no exp, O not
rescaled), or the cp.async gathers' copies (their waits and barriers stay). The results are wrong on
purpose; the loads and the tile barriers stay.
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
    _tile_scores,
    _tma_load,
    _visible_t,
)
from kernels.fast.program import _main_smem, _span, _start_program, _tail_smem
from kernels.fast.stagger import _stagger
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec

# With a tail warpgroup (TAIL_M): registers of the second main warpgroup and of the tail one
# (setmaxnreg; the first gets what is left, 192). At (216, 72) the tail spilled its MMA
# descriptors: H200, 128k, 8 heads, graph replay 0.100 ms at page 64; at (200, 112) 0.081 ms.
TAIL_REGS = gl.constexpr((200, 112))


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
                   D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr,
                   NO_GATHER: gl.constexpr):
    """A seesaw warpgroup's cp.async gather of its tile, waited for and visible to the MMAs; with a
    tail warpgroup (TAIL_M), announced on the buffer's last full barrier, which the tail waits on.
    NO_GATHER: no copies (the wait, the fence and the announcement stay)."""
    if not NO_GATHER:
        _gather_tile(KV, PageTable, page_base, start, hi, klat_buf, kpe_buf, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N,
                     4)
    async_copy.wait_group(0)
    _landed()
    if TAIL_M > 0:
        mbarrier.arrive(full_bar, count=1)

# --- the warp-specialised ("seesaw") schedule -------------------------------------------------
# Two warpgroups, each its own partition: warpgroup W scores the even (W=0) or odd (W=1) tiles
# with full 64-token MMAs (N=64 instead of 32 per warpgroup: a third less shared-memory traffic
# for Q K^T), they swap row maxima and P through shared memory, and each accumulates its half of
# O's 512 columns from both tiles of a pair. P goes into its tile's rope rows, free once scored.
# One buffer per warpgroup (Q and two 72 KB tiles fill the shared memory): a warpgroup's next tile
# is loaded once both warpgroups are done with its buffer (empty barrier, count 2).

@gluon.jit
def _seesaw(W: gl.constexpr, io, span, smem, PARTS: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr,
            PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr,
            BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr, NO_MMA: gl.constexpr, NO_SOFTMAX: gl.constexpr,
            NO_GATHER: gl.constexpr, Out, ITEMS: gl.constexpr, Items):
    """Warpgroup W's side of the seesaw schedule (see the kernel below), from its first tile to its
    half of the split's partial output. With TAIL_M, a third warpgroup (_seesaw_tail) reads the
    same tiles: a gathered tile is announced on its buffer's last full barrier, P waits until the
    tail has scored the rope rows, and a buffer is free once all three are done with it. `io`, `span`
    and `smem` are the kernel's tuples of that name (runtime values only: a tuple held in a
    variable keeps no constexprs)."""
    KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale = io
    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = span
    q_lat_s, q_pe_s, klat_s, kpe_s, full_bars, empty_bars, max_bars, p_bars, ts_bars, max0, max1 = smem
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
                           PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, TAIL_M, NO_GATHER)
        elif t < n_full:
            _issue_parts(KLat, KPe, PageTable, page_base, start, full_bars, W * PARTS, my_k, my_pe, PAGE_SIZE, PARTS)
        else:  # a partial tile, draft tokens, or past the end (all zeros: scores masked, P = 0)
            _gather_landed(KV, PageTable, page_base, start, hi, my_k, my_pe, full_bars.index(W * PARTS + PARTS - 1),
                           PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, TAIL_M, NO_GATHER)
        # Scores slice by slice of the latent dims, each as soon as its TMA has landed.
        PW: gl.constexpr = D_LATENT // PARTS
        s = warpgroup_mma_init(s_zero)
        for k in gl.static_range(PARTS):
            if not GATHER:
                if t < n_full:
                    mbarrier.wait(full_bars.index(W * PARTS + k), j & 1)
            s = _mma(ql.slice(k * PW, PW, dim=1), my_k.slice(k * PW, PW, dim=1).permute((1, 0)), s, k > 0, NO_MMA)
        s = _mma(qp, my_pe.permute((1, 0)), s, True, NO_MMA)
        s = warpgroup_mma_wait(0, deps=[s])
        qk = _tile_scores(s, qk_scale, t, n_full, bits, lo, hi, ctx_len, BLOCK_N)
        if NO_SOFTMAX:  # no maxima: none to exchange (max_bars are the softmax's own; both skip them)
            p = qk
        else:
            mx = gl.max(qk, 1)
            my_max.store(mx)
            _barrier()
            mbarrier.arrive(max_bars.index(W), count=1)
            mbarrier.wait(max_bars.index(1 - W), j & 1)
            m_new = gl.maximum(m_i, gl.maximum(mx, other_max.load(m_i.type.layout)))
            p, alpha, l_i = _softmax_step(qk, m_i, m_new, l_i)
            m_i = m_new
        if TAIL_M > 0:  # the tail warpgroup has scored this tile's rope rows too
            mbarrier.wait(ts_bars.index(W), j & 1)
        my_pe.store(p.to(my_pe.dtype))  # P into the rope rows: the score MMAs are done with them
        fence_async_shared()
        _barrier()
        mbarrier.arrive(p_bars.index(W), count=1)
        if not NO_SOFTMAX:
            o = o * gl.convert_layout(alpha, gl.SliceLayout(1, o.type.layout))[:, None]
        if NO_MMA:
            mbarrier.wait(p_bars.index(1 - W), j & 1)
        else:
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
    o = _sum_rows(W, o, m_i, l_i, max0, max1, p_bars.index(W), p_bars.index(1 - W), n_pairs & 1, rows, PartLse,
                  split, total_rows, b, M, ITEMS, Items)
    # Out through this warpgroup's own tile buffer (no one reads it any more: see above).
    _half_out(o, klat_s.index(W), PartO, split, total_rows, b, mb, W, M, BLOCK_M, D_LATENT, Out, ITEMS, Items)

@gluon.jit
def _tail_scores(u: gl.constexpr, t, j, n_full, k_buf, pe_buf, qt_lat, qt_pe, full_bars, ts_bars, s_zero,
                 PARTS: gl.constexpr, GATHER: gl.constexpr, NO_MMA: gl.constexpr):
    """S^T = K Q^T of the tile in buffer u for the tail rows (tokens on the MMA's M side, rows on
    its N side), slice by slice as the TMA lands; then the buffer's owner may overwrite the rope rows.
    NO_MMA: the waits without the MMAs (S^T all zeros)."""
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
        s = _mma(k_buf.slice(k * PW, PW, dim=1), qt_lat.slice(k * PW, PW, dim=1).permute((1, 0)), s, k > 0, NO_MMA)
    s = _mma(pe_buf, qt_pe.permute((1, 0)), s, True, NO_MMA)
    s = warpgroup_mma_wait(0, deps=[s])
    mbarrier.arrive(ts_bars.index(u), count=1)
    return s


@gluon.jit
def _seesaw_tail(Q, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                 n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars, empty_bars, ts_bars,
                 PARTS: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                 D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                 TAIL_M: gl.constexpr, NO_MMA: gl.constexpr, NO_SOFTMAX: gl.constexpr, Out, ITEMS: gl.constexpr, Items):
    """The rows past the last whole M block (at most TAIL_M, e.g. 72 = 64 + 8), in a third
    warpgroup, transposed so that nothing is padded to 64 rows: S^T = K Q^T has the tile's 64
    tokens on the MMA's M side and the TAIL_M rows on its N side (wgmma N = 8 is allowed), and
    O^T = V^T P^T the 512 latent dims on M. It reads both tiles of every pair from the seesaw's
    buffers; only the last M block's program stores its rows (the others keep the barriers going)."""
    M: gl.constexpr = Q_LEN * HEADS
    ROW0: gl.constexpr = M // BLOCK_M * BLOCK_M
    GATHER: gl.constexpr = PAGE_SIZE < BLOCK_N
    _tail_rows_in_smem(Q, b, qt_lat_s, qt_pe_s, ROW0, TAIL_M, M, D_LATENT, D_ROPE)
    rows, bits, s_zero, m_i, l_i, o = _tail_start(TreeMask, b, ROW0, HEADS, Q_LEN, D_LATENT, BLOCK_N, TAIL_M)
    for j in range(gl.cdiv(n_tiles, 2)):
        z = j >> 30  # as in _seesaw: descriptors rebuilt per pair, not hoisted
        k0, pe0, k1, pe1 = klat_s.index(z), kpe_s.index(z), klat_s.index(1 + z), kpe_s.index(1 + z)
        t0 = 2 * j
        s0 = _tail_scores(0, t0, j, n_full, k0, pe0, qt_lat_s.index(z), qt_pe_s.index(z), full_bars, ts_bars,
                          s_zero, PARTS, GATHER, NO_MMA)
        s1 = _tail_scores(1, t0 + 1, j, n_full, k1, pe1, qt_lat_s.index(z), qt_pe_s.index(z), full_bars, ts_bars,
                          s_zero, PARTS, GATHER, NO_MMA)
        qk0 = s0 * qk_scale
        qk1 = s1 * qk_scale
        start = lo + t0 * BLOCK_N
        if t0 + 1 >= n_full:
            qk0 = gl.where(_visible_t(bits, start, hi, ctx_len, BLOCK_N), qk0, float("-inf"))
            qk1 = gl.where(_visible_t(bits, start + BLOCK_N, hi, ctx_len, BLOCK_N), qk1, float("-inf"))
        if NO_SOFTMAX:
            p0 = qk0
            p1 = qk1
        else:
            m_new = gl.maximum(m_i, gl.maximum(gl.max(qk0, 0), gl.max(qk1, 0)))
            m_safe, alpha = _max_shift(m_i, m_new)
            p0 = gl.exp2(qk0 - m_safe[None, :])
            p1 = gl.exp2(qk1 - m_safe[None, :])
            l_i = l_i * alpha + gl.sum(p0, 0) + gl.sum(p1, 0)
            m_i = m_new
            o = o * alpha[None, :]
        # One P buffer (shared memory is full): tile 0's PV MMA retires before tile 1's P goes in.
        pt = pt_s.index(z)
        _post_pt(pt, p0)
        if not NO_MMA:
            o = warpgroup_mma(k0.permute((1, 0)), pt.permute((1, 0)), o)
        _barrier()
        _post_pt(pt, p1)
        if not NO_MMA:
            acc = warpgroup_mma(k1.permute((1, 0)), pt.permute((1, 0)), o, is_async=True)
            o = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty_bars.index(0), count=1)
        mbarrier.arrive(empty_bars.index(1), count=1)
    _tail_out(o, m_i, l_i, rows, PartO, PartLse, split, total_rows, b, mb, M, D_LATENT, Out, ITEMS, Items)


@gluon.jit
def _gluon_seesaw_kernel(Q, KLat, KPe, args, HEADS: gl.constexpr, Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr,
                         D_LATENT: gl.constexpr, D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                         TAIL_M: gl.constexpr, num_warps: gl.constexpr, NO_MMA: gl.constexpr,
                         NO_SOFTMAX: gl.constexpr, NO_GATHER: gl.constexpr, STAGGER: gl.constexpr,
                         ITEMS: gl.constexpr, Stamps=None, STAMP_TILES: gl.constexpr = 0,
                         SCORES_AHEAD: gl.constexpr = False):
    """Grid (m_blocks, splits, batch), 4 + 4 warps: the seesaw schedule (see _seesaw); with TAIL_M,
    4 more for the rows past the last whole M block (see _seesaw_tail). `args`: the rest of the launch's
    arguments, one tuple (kernels.fast.paths.SPLIT_ARGS). NO_MMA, NO_SOFTMAX, NO_GATHER: removal experiments
    (see the module). ITEMS: the batch schedule's grid (m_blocks, items), each program's request and tokens a
    row of Items (kernels.fast.program._start_program); Out: the output, where an item is its request's only one (Items
    and Out are None without ITEMS). Stamps, STAMP_TILES: the in-kernel timeline of the staggered schedule
    (kernels/fast/timeline.py; off at 0). SCORES_AHEAD: the staggered schedule in FlashMLA's order within a pair too
    (kernels/fast/stagger.py, AHEAD)."""
    KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len, stride_pt, total_rows, Items, Out = args
    mb, split, b, item = _start_program(Items, Stamps, BLOCK_N, ITEMS, STAMP_TILES)
    # Each warpgroup's row maxima (max0, max1), then (after the loop) its row sums in the same place: a
    # warpgroup leaves the loop only after the other's last P, which that one stored after reading these maxima.
    q_lat_s, q_pe_s, klat_s, kpe_s, max0, max1 = _main_smem(Q, KLat, KPe, b, mb, HEADS, Q_LEN, D_LATENT, D_ROPE,
                                                            BLOCK_M, BLOCK_N, num_warps)
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

    # The same two main partitions either way; what they share travels in three tuples (the kernel's tensors,
    # the program's place in the problem, its shared memory), written once here.
    io = (KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale)
    span = _span(KVLens, b, mb, split, item, split_len, stride_pt, total_rows, Q_LEN, BLOCK_N, ITEMS)
    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = span
    smem = (q_lat_s, q_pe_s, klat_s, kpe_s, full_bars, empty_bars, max_bars, p_bars, ts_bars, max0, max1)
    if TAIL_M > 0:
        qt_lat_s, qt_pe_s, pt_s = _tail_smem(Q, q_lat_s, q_pe_s, TAIL_M, BLOCK_N)
        gl.warp_specialize([
            (_seesaw, (0, io, span, smem, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N,
                       TAIL_M, NO_MMA, NO_SOFTMAX, NO_GATHER, Out, ITEMS, Items)),
            (_seesaw, (1, io, span, smem, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N,
                       TAIL_M, NO_MMA, NO_SOFTMAX, NO_GATHER, Out, ITEMS, Items)),
            (_seesaw_tail, (Q, TreeMask, PartO, PartLse, qk_scale, b, mb, split, total_rows, lo, hi, ctx_len, n_full,
                            n_tiles, klat_s, kpe_s, qt_lat_s, qt_pe_s, pt_s, full_bars, empty_bars, ts_bars, PARTS,
                            HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N, TAIL_M, NO_MMA,
                            NO_SOFTMAX, Out, ITEMS, Items)),
        ], [4, 4], [TAIL_REGS[0], TAIL_REGS[1]])
    elif STAGGER:  # whole blocks: the staggered schedule (kernels/fast/stagger.py)
        p0_s = gl.allocate_shared_memory(KPe.dtype, [BLOCK_M, D_ROPE], KPe.layout)  # warpgroup 0's P
        sum_bar = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout()).index(0)
        mbarrier.init(sum_bar, count=2)
        fence_async_shared()
        _barrier()
        gl.warp_specialize([
            (_stagger, (0, io, span, smem, p0_s, sum_bar, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M,
                        BLOCK_N, Out, ITEMS, Items, NO_MMA, NO_SOFTMAX, NO_GATHER, Stamps,
                        STAMP_TILES, SCORES_AHEAD)),
            (_stagger, (1, io, span, smem, p0_s, sum_bar, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M,
                        BLOCK_N, Out, ITEMS, Items, NO_MMA, NO_SOFTMAX, NO_GATHER, Stamps,
                        STAMP_TILES, SCORES_AHEAD)),
        ], [4], [240])
    else:
        gl.warp_specialize([
            (_seesaw, (0, io, span, smem, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N,
                       TAIL_M, NO_MMA, NO_SOFTMAX, NO_GATHER, Out, ITEMS, Items)),
            (_seesaw, (1, io, span, smem, PARTS, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N,
                       TAIL_M, NO_MMA, NO_SOFTMAX, NO_GATHER, Out, ITEMS, Items)),
        ], [4], [240])


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
           items: torch.Tensor | None = None, out: torch.Tensor | None = None, stamps=None) -> None:
    """Launch `_gluon_seesaw_kernel` as kernels.fast.paths planned `spec` (latent tiles in slices; items, out:
    the batch schedule's; stamps: kernels.fast.timeline's buffer and tile count, or None)."""
    common.launch(_gluon_seesaw_kernel, inp, spec, part_o, part_lse, SEESAW_SLICE, items, out, stamps)
