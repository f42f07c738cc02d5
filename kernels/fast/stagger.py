"""The seesaw kernel's staggered schedule (`stagger=True`, 64-row blocks without a tail warpgroup, whole or
the last one padded), FlashMLA's order of work for a pair of tiles (tile 2j in buffer 0, scored by warpgroup 0;
tile 2j+1 in buffer 1, scored by warpgroup 1; each warpgroup owns half of O's columns):

- the maxima are staggered: warpgroup 0 runs its softmax and posts its row maxima, warpgroup 1 takes
  them for its own (so its softmax runs under warpgroup 0's P V), and warpgroup 0 later rescales by
  the factor between the two (it posts warpgroup 1's copy of its P, at the pair's maxima, while its
  own first P V runs);
- P lives outside the tile buffers: warpgroup 0's P in a buffer of its own (its own P V takes it from
  registers), warpgroup 1's in Q's rope rows, whose values every score MMA takes from registers;
- each buffer is freed in two halves, each by the one warpgroup whose P V reads it: latent dims
  [0, 256) by warpgroup 0, [256, 512) and the rope dims by warpgroup 1, which loads the next tile's
  half into it at once (by TMA, or a cp.async gather it waits for), before the other half is free;
  warpgroup 1 refills buffer 1's half as soon as the first of its two P V MMAs is done, before the
  second (buffer 0's) is.

With AHEAD (scores_ahead; by default where 9 or more M blocks read each tile), FlashMLA's order within a pair too:
each pair starts by reading the next pair's page-table entries, and warpgroup 0 issues the next tile's first half of
scores under its second P V, before it loads buffer 1's first half.

The default where the rows are such blocks and pages hold whole tiles (GLUON_CONFIG in
kernels/fast/common.py; the measurements: docs/results/fast-kernel-defaults.md). Padded rows (past q_len x heads)
score zero queries, see no draft token and are never written.
tests/ring_protocol.py (`stagger`, `stagger-ahead`) models its barriers: change the two together.

Removal experiments (roofline/pipelines/removal_experiment.py), as the seesaw's: NO_MMA leaves out every
warpgroup MMA (scores and P V: S stays zero, O unchanged), NO_SOFTMAX the online softmax (P = the raw scaled
scores; no maxima posted, no exp, O not rescaled: the maxima barriers stay, as they also say that a P buffer
is free), NO_GATHER the cp.async gathers' copies (their waits and barriers stay). Off, the code is the
schedule's own; on, the results are wrong on purpose, and the loads and every barrier stay."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import hopper as hp

from kernels.fast.gluon import (
    _barrier,
    _gather_rows,
    _half_out,
    _landed,
    _main_start,
    _max_shift,
    _softmax_step,
    _sum_rows,
    _tile_pages,
    _tile_scores,
    _tma_load,
)
from kernels.fast.timeline import stamp, stamp_end, stamp_head, stamp_start


@gluon.jit
def _load_half(H: gl.constexpr, t, u: gl.constexpr, kb, pe, io, span, full_bars, PARTS: gl.constexpr,
               PAGE_SIZE: gl.constexpr, NO_GATHER: gl.constexpr, page=0, AHEAD: gl.constexpr = False):
    """Half H of tile t into buffer u (kb: [BLOCK_N, D_LATENT], pe: [BLOCK_N, D_ROPE]): latent slices
    [H * PARTS/2, (H + 1) * PARTS/2), and with H = 1 the rope dims (on the last slice's barrier). By TMA where
    the tile is a whole page's (t < n_full; with AHEAD its `page` read before, _page_ahead), else gathered by this
    warpgroup's cp.async, waited for, made visible, and its barriers arrived on. io, span: the kernel's tensors and
    this program's tiles, as _stagger takes them."""
    KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale = io
    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = span
    BLOCK_N: gl.constexpr = kb.shape[0]
    D_LATENT: gl.constexpr = kb.shape[1]
    D_ROPE: gl.constexpr = pe.shape[1]
    start = lo + t * BLOCK_N
    HP: gl.constexpr = PARTS // 2
    tma = t < n_full
    if PAGE_SIZE < BLOCK_N:  # pages smaller than a tile: every tile gathered
        tma = t < 0
    if tma:
        if AHEAD:
            row0 = page * PAGE_SIZE + start % PAGE_SIZE
        else:
            row0 = gl.load(PageTable + page_base + start // PAGE_SIZE) * PAGE_SIZE + start % PAGE_SIZE
        W_: gl.constexpr = KLat.block_type.shape[1]
        for i in gl.static_range(H * HP, H * HP + HP):  # (a slice index; a name bound in here is no constexpr)
            bar = full_bars.index(u * PARTS + i)
            if i == PARTS - 1:
                hp.mbarrier.expect(bar, KLat.block_type.nbytes + KPe.block_type.nbytes)
                _tma_load(KPe, [row0, 0], bar, pe)
            else:
                hp.mbarrier.expect(bar, KLat.block_type.nbytes)
            _tma_load(KLat, [row0, i * W_], bar, kb.slice(i * W_, W_, dim=1))
    else:
        C: gl.constexpr = D_LATENT // D_ROPE // 2  # D_ROPE-wide chunks of the latent dims in a half
        if not NO_GATHER:
            _gather_rows(KV, _tile_pages(PageTable, page_base, start, hi, PAGE_SIZE, BLOCK_N, 4), start, hi, kb, pe,
                         PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_N, 4, H * C, H * C + C, H == 1)
        hp.async_copy.wait_group(0)
        _landed()
        for i in gl.static_range(H * HP, H * HP + HP):
            hp.mbarrier.arrive(full_bars.index(u * PARTS + i), count=1)


@gluon.jit
def _page_ahead(t, io, span, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr):
    """Tile t's page (0 past the whole-page tiles), read a pair ahead of its load, so that issuing the TMA waits for no
    global load (FlashMLA reads the next pair's page-table entries as a pair starts)."""
    KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale = io
    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = span
    return gl.load(PageTable + page_base + (lo + t * BLOCK_N) // PAGE_SIZE, mask=t < n_full, other=0)


@gluon.jit
def _score_slices(s, kb, ql, full_bars, u: gl.constexpr, j, LO: gl.constexpr, HI: gl.constexpr, PARTS: gl.constexpr,
                  START: gl.constexpr = 0, NO_MMA: gl.constexpr = False):
    """Latent slices LO..HI-1 (modulo PARTS) of S = Q K^T for the tile in buffer u (pair j) issued onto s as each
    lands, not waited for; slice START, the score's first, overwrites s. NO_MMA: the waits alone."""
    PW: gl.constexpr = ql.shape[1] // PARTS
    for i in gl.static_range(LO, HI):  # (i % PARTS: the slice)
        hp.mbarrier.wait(full_bars.index(u * PARTS + i % PARTS), j & 1)
        if not NO_MMA:
            s = hp.warpgroup_mma(ql.slice(i % PARTS * PW, PW, dim=1),
                                 kb.slice(i % PARTS * PW, PW, dim=1).permute((1, 0)), s,
                                 use_acc=i > START, is_async=True)
    return s


@gluon.jit
def _scores(kb, pe, ql, qpe, full_bars, u: gl.constexpr, j, FIRST: gl.constexpr, s_zero, PARTS: gl.constexpr,
            NO_MMA: gl.constexpr, Stamps, ROLE: gl.constexpr, at, STAMP_TILES: gl.constexpr):
    """S = Q K^T of the tile in buffer u (pair j), slice by slice as they land, half FIRST's slices
    first; the rope dims' MMA takes Q's from registers (qpe). NO_MMA: the waits alone (S zero). Stamps: the
    timeline's (kernels/fast/timeline.py), stamped at pair `at`."""
    START: gl.constexpr = FIRST * (PARTS // 2)
    s = _score_slices(hp.warpgroup_mma_init(s_zero), kb, ql, full_bars, u, j, START, START + PARTS, PARTS, START,
                      NO_MMA)
    stamp(Stamps, ROLE, at, 8, STAMP_TILES)
    if not NO_MMA:
        s = hp.warpgroup_mma(qpe, pe.permute((1, 0)), s, is_async=True)
    s = hp.warpgroup_mma_wait(0, deps=[s])
    stamp(Stamps, ROLE, at, 9, STAMP_TILES)
    return s


@gluon.jit
def _stagger(W: gl.constexpr, io, span, smem, p0_s, sum_bar, PARTS: gl.constexpr, HEADS: gl.constexpr,
             Q_LEN: gl.constexpr, PAGE_SIZE: gl.constexpr, D_LATENT: gl.constexpr, D_ROPE: gl.constexpr,
             BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, Out, ITEMS: gl.constexpr, Items, NO_MMA: gl.constexpr,
             NO_SOFTMAX: gl.constexpr, NO_GATHER: gl.constexpr, Stamps, STAMP_TILES: gl.constexpr,
             AHEAD: gl.constexpr = False):
    """Warpgroup W's side of the staggered schedule (see the module), from its first tile to its half of
    the split's partial output. max_bars[W]: W's maxima posted; p_bars[W]: W's P posted. AHEAD (scores_ahead):
    each pair starts by reading the next pair's pages, and warpgroup 0 issues the next tile's first half of scores
    under its second P V, before it loads buffer 1's first half (FlashMLA's order). NO_MMA, NO_SOFTMAX,
    NO_GATHER: the removal experiments (see the module). Stamps, STAMP_TILES: the in-kernel timeline
    (kernels/fast/timeline.py; off at 0)."""
    stamp_start(Stamps, W, STAMP_TILES)
    KLat, KPe, KV, PageTable, TreeMask, PartO, PartLse, qk_scale = io
    b, mb, split, total_rows, page_base, lo, hi, ctx_len, n_full, n_tiles = span
    q_lat_s, q_pe_s, klat_s, kpe_s, full_bars, empty_bars, max_bars, p_bars, ts_bars, max0, max1 = smem
    M: gl.constexpr = Q_LEN * HEADS
    HALF: gl.constexpr = D_LATENT // 2
    rows, s_zero, m_i, l_i, o, bits = _main_start(TreeMask, b, mb, HEADS, Q_LEN, D_LATENT, BLOCK_M, BLOCK_N)
    qpe = q_pe_s.index(0).load(gl.DotOperandLayout(operand_index=0, parent=s_zero.type.layout, k_width=2))
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o.type.layout, k_width=2)
    o_rows: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    n_pairs = gl.cdiv(n_tiles, 2)
    last = 2 * n_pairs  # tiles t < last are loaded (past n_tiles: zeros, masked)
    s = s_zero
    if n_pairs > 0:  # this warpgroup's first tile, both halves, and its scores
        for h in gl.static_range(2):
            _load_half(h, W, W, klat_s.index(W), kpe_s.index(W), io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER)
        s = _scores(klat_s.index(W), kpe_s.index(W), q_lat_s.index(0), qpe, full_bars, W, 0, 0, s_zero, PARTS, NO_MMA,
                    Stamps, W, 0, 0)
    stamp_head(Stamps, W, 3, STAMP_TILES)
    for j in range(n_pairs):
        t = 2 * j + W
        z = j >> 30  # an opaque zero: MMA descriptors rebuilt per pair, not hoisted (they spill)
        k0, k1, pe0, pe1 = klat_s.index(z), klat_s.index(1 + z), kpe_s.index(z), kpe_s.index(1 + z)
        p1_s = q_pe_s.index(z)
        pg2 = 0
        pg3 = 0
        if AHEAD:  # the next pair's pages, read before this pair's softmax
            pg2 = _page_ahead(2 * j + 2, io, span, PAGE_SIZE, BLOCK_N)
            pg3 = _page_ahead(2 * j + 3, io, span, PAGE_SIZE, BLOCK_N)
        qk = _tile_scores(s, qk_scale, t, n_full, bits, lo, hi, ctx_len, BLOCK_N)
        if W == 0:
            if NO_SOFTMAX:
                p = qk
            else:
                m0 = gl.maximum(m_i, gl.max(qk, 1))
                p, sc0, l_i = _softmax_step(qk, m_i, m0, l_i)
                max0.store(m0)
            _barrier()
            hp.mbarrier.arrive(max_bars.index(0), count=1)
            stamp(Stamps, W, j, 0, STAMP_TILES)
            if not NO_SOFTMAX:
                o = o * gl.convert_layout(sc0, o_rows)[:, None]
            acc = o
            if not NO_MMA:
                acc = hp.warpgroup_mma(gl.convert_layout(p.to(k0.dtype), p_layout), k0.slice(0, HALF, dim=1), o,
                                       is_async=True)
            # Warpgroup 1's copy of this P, under this P V: at the pair's maxima, once it has posted them
            hp.mbarrier.wait(max_bars.index(1), j & 1)
            stamp(Stamps, W, j, 1, STAMP_TILES)
            if NO_SOFTMAX:
                p0_s.store(p.to(p0_s.dtype))
            else:
                m1 = max1.load(m_i.type.layout)
                m1_safe, sc1 = _max_shift(m0, m1)
                p0_s.store((p * sc1[:, None]).to(p0_s.dtype))
            hp.fence_async_shared()
            _barrier()
            hp.mbarrier.arrive(p_bars.index(0), count=1)
            stamp(Stamps, W, j, 2, STAMP_TILES)
            if not NO_MMA:
                o = hp.warpgroup_mma_wait(0, deps=[acc])
            stamp(Stamps, W, j, 3, STAMP_TILES)
            if t + 2 < last:  # buffer 0's first half is free: the next even tile's
                _load_half(0, t + 2, 0, k0, pe0, io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER, pg2, AHEAD)
            stamp(Stamps, W, j, 4, STAMP_TILES)
            hp.mbarrier.wait(p_bars.index(1), j & 1)
            stamp(Stamps, W, j, 5, STAMP_TILES)
            if not NO_SOFTMAX:
                o = o * gl.convert_layout(sc1, o_rows)[:, None]
                l_i = l_i * sc1
                m_i = m1
            if AHEAD and not NO_MMA:  # the next tile's first half of scores under this P V (its slices' loads
                # were issued after the first P V), then buffer 1's first half loaded once this P V is done
                acc = hp.warpgroup_mma(p1_s, k1.slice(0, HALF, dim=1), o, is_async=True)
                if j + 1 < n_pairs:
                    s = _score_slices(s_zero, k0, q_lat_s.index(z), full_bars, 0, j + 1, 0, PARTS // 2, PARTS)
                    o = hp.warpgroup_mma_wait(PARTS // 2, deps=[acc])
                    stamp(Stamps, W, j, 6, STAMP_TILES)
                    if t + 3 < last:
                        _load_half(0, t + 3, 1, k1, pe1, io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER, pg3, AHEAD)
                    stamp(Stamps, W, j, 7, STAMP_TILES)
                    s = _score_slices(s, k0, q_lat_s.index(z), full_bars, 0, j + 1, PARTS // 2, PARTS, PARTS)
                    stamp(Stamps, W, j, 8, STAMP_TILES)
                    s = hp.warpgroup_mma(qpe, pe0.permute((1, 0)), s, is_async=True)
                    s = hp.warpgroup_mma_wait(0, deps=[s])
                    stamp(Stamps, W, j, 9, STAMP_TILES)
                else:  # the last pair: no next tile
                    o = hp.warpgroup_mma_wait(0, deps=[acc])
                    stamp(Stamps, W, j, 6, STAMP_TILES)
                    stamp(Stamps, W, j, 7, STAMP_TILES)
            else:
                if not NO_MMA:
                    acc = hp.warpgroup_mma(p1_s, k1.slice(0, HALF, dim=1), o, is_async=True)
                    o = hp.warpgroup_mma_wait(0, deps=[acc])
                stamp(Stamps, W, j, 6, STAMP_TILES)
                if t + 3 < last:  # buffer 1's first half is free: the next odd tile's
                    _load_half(0, t + 3, 1, k1, pe1, io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER, pg3, AHEAD)
                stamp(Stamps, W, j, 7, STAMP_TILES)
                if j + 1 < n_pairs:
                    s = _scores(k0, pe0, q_lat_s.index(z), qpe, full_bars, 0, j + 1, 0, s_zero, PARTS, NO_MMA,
                                Stamps, W, j, STAMP_TILES)
        else:
            hp.mbarrier.wait(max_bars.index(0), j & 1)
            stamp(Stamps, W, j, 0, STAMP_TILES)
            if NO_SOFTMAX:
                p = qk
            else:
                m0 = max0.load(m_i.type.layout)
                m0_safe, sc0 = _max_shift(m_i, m0)
                m1 = gl.maximum(m0, gl.max(qk, 1))
                m1_safe, sc1 = _max_shift(m0, m1)
                p = gl.exp2(qk - m1_safe[:, None])
                l_i = l_i * sc0 * sc1 + gl.sum(p, 1)
                max1.store(m1)
            _barrier()
            hp.mbarrier.arrive(max_bars.index(1), count=1)
            if not NO_SOFTMAX:
                o = o * gl.convert_layout(sc0 * sc1, o_rows)[:, None]
            stamp(Stamps, W, j, 1, STAMP_TILES)
            p1_s.store(p.to(p1_s.dtype))
            hp.fence_async_shared()
            _barrier()
            hp.mbarrier.arrive(p_bars.index(1), count=1)
            stamp(Stamps, W, j, 2, STAMP_TILES)
            acc = o
            if not NO_MMA:
                acc = hp.warpgroup_mma(p1_s, k1.slice(HALF, HALF, dim=1), o, is_async=True)
            hp.mbarrier.wait(p_bars.index(0), j & 1)
            stamp(Stamps, W, j, 3, STAMP_TILES)
            if not NO_MMA:
                acc = hp.warpgroup_mma(p0_s, k0.slice(HALF, HALF, dim=1), acc, is_async=True)
                acc = hp.warpgroup_mma_wait(1, deps=[acc])  # the first P V is done: buffer 1's second half is free
            stamp(Stamps, W, j, 4, STAMP_TILES)
            if t + 2 < last:
                _load_half(1, t + 2, 1, k1, pe1, io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER, pg3, AHEAD)
            stamp(Stamps, W, j, 5, STAMP_TILES)
            if not NO_MMA:
                o = hp.warpgroup_mma_wait(0, deps=[acc])  # and buffer 0's
            stamp(Stamps, W, j, 6, STAMP_TILES)
            if not NO_SOFTMAX:
                m_i = m1
            if t + 1 < last:
                _load_half(1, t + 1, 0, k0, pe0, io, span, full_bars, PARTS, PAGE_SIZE, NO_GATHER, pg2, AHEAD)
            stamp(Stamps, W, j, 7, STAMP_TILES)
            if j + 1 < n_pairs:
                s = _scores(k1, pe1, q_lat_s.index(z), qpe, full_bars, 1, j + 1, 1, s_zero, PARTS, NO_MMA,
                            Stamps, W, j, STAMP_TILES)
    stamp_head(Stamps, W, 4, STAMP_TILES)
    # Row sums where the maxima were (each warpgroup's last reader of the other's maxima is behind a
    # barrier this one waited for), then this warpgroup's half of O through its own tile buffer.
    o = _sum_rows(W, o, m_i, l_i, max0, max1, sum_bar, sum_bar, 0, rows, PartLse, split, total_rows, b, M, ITEMS, Items)
    _half_out(o, klat_s.index(W), PartO, split, total_rows, b, mb, W, M, BLOCK_M, D_LATENT, Out, ITEMS, Items)
    stamp_end(Stamps, W, n_tiles, STAMP_TILES)
