"""What triton_mla_fast's Gluon kernels (sm_90) share: Hopper copies under the names of both Triton
releases, KV tiles in by TMA or by cp.async gathers through the page table, query rows into shared
memory, the draft-tree mask as 64 bits per row, partial outputs out, and the launcher with its TMA
descriptors; a program's start (its request and tokens, the shared memory its warpgroups share):
kernels/fast/program.py. The kernels: kernels/fast/seesaw.py (warp-specialised, pairs of tiles;
kernels/fast/stagger.py its staggered schedule) and kernels/fast/ring.py (warp-specialised, one tile at
a time).

Tiles inside one page come by TMA; smaller pages, the partial tile and the draft tokens by cp.async
gathers (zeros past the end, so a masked score never meets a stale value). The draft tree is a 64-bit
mask per row (q_len <= 64).
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    async_copy,
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import constexpr_function

from kernels.fast.portable import split_args
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec

_LN2 = gl.constexpr(0.6931471805599453)
# The fp32 half of O on its way out (_half_out): rows of 1 KB, the 32-byte group g of row r stored at g XOR (r mod 8).
# The accumulator's stores put a warp's 8 rows at the same column; unswizzled they all land in the same 8 banks
# (8 passes a store), swizzled in 4 groups of 8 banks (2 passes, the least for 256 B). The 64-column chunks read
# back stay whole: the XOR stays within 8 groups (256 B) of a row. Measured: docs/results/h200-dec03d.
_OUT_SMEM = gl.constexpr(gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0]))
# Triton 3.6 (the H200 machine's) names the copies async_copy_global_to_shared; later releases
# async_load (the old name then raises).
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_cp_async = getattr(async_copy, "async_load", None) or async_copy.async_copy_global_to_shared
_barrier = getattr(gl, "thread_barrier", None) or gl.barrier  # a CTA-wide bar.sync (renamed later)

@gluon.jit
def _mma(a, b, acc, USE_ACC: gl.constexpr, NO_MMA: gl.constexpr):
    """acc (+)= a b as an async warpgroup MMA; with NO_MMA (a removal experiment) acc as it was."""
    if not NO_MMA:
        acc = warpgroup_mma(a, b, acc, use_acc=USE_ACC, is_async=True)
    return acc


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
                 D_ROPE: gl.constexpr, BLOCK_N: gl.constexpr, num_warps: gl.constexpr, C0: gl.constexpr = 0,
                 C1: gl.constexpr = -1, ROPE: gl.constexpr = True):
    """_gather_tile's copies, with the tile's pages already loaded (_tile_pages); only the latent dims'
    D_ROPE-wide chunks [C0, C1) (default: all) and the rope dims where ROPE."""
    blk: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8],
                                         warps_per_cta=[num_warps, 1], order=[1, 0])
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, blk))
    ok = pos < hi
    ptr = KV + ((page.to(gl.int64) * PAGE_SIZE + pos % PAGE_SIZE) * (D_LATENT + D_ROPE))[:, None] + \
        gl.arange(0, D_ROPE, layout=gl.SliceLayout(0, blk))[None, :]
    for c in gl.static_range(C0, D_LATENT // D_ROPE if C1 < 0 else C1):
        _cp_async(klat_buf.slice(c * D_ROPE, D_ROPE, dim=1), ptr + c * D_ROPE, mask=ok[:, None])
    if ROPE:
        _cp_async(kpe_buf, ptr + D_LATENT, mask=ok[:, None])
    async_copy.commit_group()


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
def _max_shift(m_i, m_new):
    """(m_safe, alpha): the exponent offset for the new row maxima (0 for a row that has seen nothing
    yet) and the factor that rescales the old sums and O (log2 units)."""
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    return m_safe, gl.exp2(m_i - m_safe)


@gluon.jit
def _tile_scores(s, qk_scale, t, n_full, bits, lo, hi, ctx_len, BLOCK_N: gl.constexpr):
    """Tile t's scores (the split's tiles from token `lo`) in log2 units, S x qk_scale; from tile n_full on (the
    last prefix tile, the draft tokens) -inf where _visible masks them."""
    qk = s * qk_scale
    if t >= n_full:
        qk = gl.where(_visible(bits, lo + t * BLOCK_N, hi, ctx_len, BLOCK_N), qk, float("-inf"))
    return qk


@gluon.jit
def _softmax_step(qk, m_i, m_new, l_i):
    """One tile of the online softmax, rows at the new maxima m_new: (P, alpha: the factor that rescales the
    old sums and O, the row sums with this tile's)."""
    m_safe, alpha = _max_shift(m_i, m_new)
    p = gl.exp2(qk - m_safe[:, None])
    return p, alpha, l_i * alpha + gl.sum(p, 1)


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
def _tail_start(TreeMask, b, ROW0: gl.constexpr, HEADS: gl.constexpr, Q_LEN: gl.constexpr, D_LATENT: gl.constexpr,
                BLOCK_N: gl.constexpr, TAIL_M: gl.constexpr):
    """The tail warpgroup's start on rows ROW0.. (transposed: the rows are the scores' columns): (rows, the
    rows' draft-tree bits, zero scores S^T, row maxima, row sums, O^T)."""
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, TAIL_M, 16])
    col_l: gl.constexpr = gl.SliceLayout(0, s_layout)
    rows = ROW0 + gl.arange(0, TAIL_M, layout=col_l)
    bits = _draft_bits(TreeMask, b, rows, HEADS, Q_LEN)
    s_zero = gl.zeros([BLOCK_N, TAIL_M], gl.float32, s_layout)
    m_i = gl.full([TAIL_M], float("-inf"), gl.float32, col_l)
    l_i = gl.zeros([TAIL_M], gl.float32, col_l)
    o = gl.zeros([D_LATENT, TAIL_M], gl.float32, s_layout)  # O^T
    return rows, bits, s_zero, m_i, l_i, o


@gluon.jit
def _item_out(Items, item, M: gl.constexpr):
    """Where item `item`'s rows go, read from its row of Items: (b, split, total_rows) such that the stores'
    split x total_rows + b x M is its partial slot x M; total_rows 0 where it is its request's only item
    (slot -1), its rows then b x M + row of the output."""
    b = gl.load(Items + item * 5)
    slot = gl.load(Items + item * 5 + 4)
    return b, slot - b, gl.where(slot < 0, 0, M)


@gluon.jit
def _lse_out(PartLse, lse, split, total_rows, b, rows, M: gl.constexpr, ITEMS: gl.constexpr, Items):
    """A block's rows' log-sum-exp into the partials. With ITEMS `split` is the item's index (its slot read
    from Items), and there is none where the item writes the output itself (no combine reads it)."""
    if ITEMS:
        b, split, total_rows = _item_out(Items, split, M)
        gl.store(PartLse + split * total_rows + b * M + rows, lse, mask=(rows < M) & (total_rows > 0))
    else:
        gl.store(PartLse + split * total_rows + b * M + rows, lse, mask=rows < M)


@gluon.jit
def _sum_rows(W: gl.constexpr, o, m_i, l_i, vec0, vec1, posted, seen, phase, rows, PartLse, split, total_rows, b,
              M: gl.constexpr, ITEMS: gl.constexpr, Items):
    """Main warpgroup W after its last tile: its row sums into row vector W of the two (vec0, vec1), arrived on
    `posted`; the other's added once phase `phase` of `seen` completes; W=0 stores the rows' log-sum-exp
    (_lse_out). Returns O divided by the sums."""
    if W == 0:
        my_sum, other_sum = vec0, vec1
    else:
        my_sum, other_sum = vec1, vec0
    my_sum.store(l_i)
    _barrier()
    mbarrier.arrive(posted, count=1)
    mbarrier.wait(seen, phase)
    l_all = l_i + other_sum.load(m_i.type.layout)
    if W == 0:
        lse = gl.where(l_all > 0, (m_i + gl.log2(l_all)) * _LN2, float("-inf"))
        _lse_out(PartLse, lse, split, total_rows, b, rows, M, ITEMS, Items)
    return o / gl.convert_layout(gl.where(l_all > 0, l_all, 1.0), gl.SliceLayout(1, o.type.layout))[:, None]


@gluon.jit
def _half_out(o, buf, PartO, split, total_rows, b, mb, W: gl.constexpr, M: gl.constexpr, BLOCK_M: gl.constexpr,
              D_LATENT: gl.constexpr, Out, ITEMS: gl.constexpr, Items):
    """Main warpgroup W's normalised half of the block's partial output, through shared memory `buf`
    (a tile buffer no one reads any more), 64 columns at a time: no thread holds an address per
    register of O. With ITEMS `split` is the item's index: its slot is read from Items (_item_out), and an
    item that is its request's only one writes into the output Out instead (the same rows: b x M + row)."""
    HALF: gl.constexpr = D_LATENT // 2
    o_s = _reinterpret(buf, gl.float32, [BLOCK_M, HALF], _OUT_SMEM)
    o_s.store(o)
    _barrier()
    blk_o: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[2, 16], warps_per_cta=[4, 1],
                                           order=[1, 0])
    rows_o = mb * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, blk_o))
    if ITEMS:
        b, split, total_rows = _item_out(Items, split, M)
        offs = ((split * total_rows + b * M + rows_o).to(gl.int64) * D_LATENT)[:, None] + W * HALF + \
            gl.arange(0, 64, layout=gl.SliceLayout(0, blk_o))[None, :]
        if total_rows == 0:
            for c in gl.static_range(HALF // 64):
                chunk = o_s.slice(c * 64, 64, dim=1).load(blk_o)
                gl.store(Out + offs + c * 64, chunk.to(Out.dtype.element_ty), mask=(rows_o < M)[:, None])
        else:
            for c in gl.static_range(HALF // 64):
                chunk = o_s.slice(c * 64, 64, dim=1).load(blk_o)
                gl.store(PartO + offs + c * 64, chunk.to(PartO.dtype.element_ty), mask=(rows_o < M)[:, None])
    else:
        o_ptr = PartO + ((split * total_rows + b * M + rows_o).to(gl.int64) * D_LATENT)[:, None] + W * HALF + \
            gl.arange(0, 64, layout=gl.SliceLayout(0, blk_o))[None, :]
        for c in gl.static_range(HALF // 64):
            chunk = o_s.slice(c * 64, 64, dim=1).load(blk_o)
            gl.store(o_ptr + c * 64, chunk.to(PartO.dtype.element_ty), mask=(rows_o < M)[:, None])


@gluon.jit
def _post_pt(pt, p):
    """P^T into the shared buffer `pt` for the PV MMA: fenced for the async proxy, then a barrier so that
    all of it is in before any warp's MMA reads it."""
    pt.store(gl.permute(p.to(pt.dtype), (1, 0)))
    fence_async_shared()
    _barrier()


@gluon.jit
def _tail_out(o, m_i, l_i, rows, PartO, PartLse, split, total_rows, b, mb, M: gl.constexpr,
              D_LATENT: gl.constexpr, Out, ITEMS: gl.constexpr, Items):
    """The tail rows' partial output (O^T, normalised here) and log-sum-exp, stored by the last M block's
    program only (in the others the tail warpgroup ran to keep the barriers going). With ITEMS `split` is the
    item's index (_item_out), and an item that is its request's only one writes its rows into the output Out
    and no log-sum-exp."""
    if mb == gl.num_programs(0) - 1:
        if ITEMS:
            b, split, total_rows = _item_out(Items, split, M)
        out_rows = b * M + rows
        lse = gl.where(l_i > 0, (m_i + gl.log2(l_i)) * _LN2, float("-inf"))
        if ITEMS:
            gl.store(PartLse + split * total_rows + out_rows, lse, mask=(rows < M) & (total_rows > 0))
            o = o / gl.where(l_i > 0, l_i, 1.0)[None, :]
            dims = gl.arange(0, D_LATENT, layout=gl.SliceLayout(1, o.type.layout))
            offs = ((split * total_rows + out_rows).to(gl.int64) * D_LATENT)[None, :] + dims[:, None]
            if total_rows == 0:
                gl.store(Out + offs, o.to(Out.dtype.element_ty), mask=(rows < M)[None, :])
            else:
                gl.store(PartO + offs, o.to(PartO.dtype.element_ty), mask=(rows < M)[None, :])
        else:
            gl.store(PartLse + split * total_rows + out_rows, lse, mask=rows < M)
            o = o / gl.where(l_i > 0, l_i, 1.0)[None, :]
            dims = gl.arange(0, D_LATENT, layout=gl.SliceLayout(1, o.type.layout))
            ptr = PartO + ((split * total_rows + out_rows).to(gl.int64) * D_LATENT)[None, :] + dims[:, None]
            gl.store(ptr, o.to(PartO.dtype.element_ty), mask=(rows < M)[None, :])

@gluon.jit
def _visible_t(bits, start, hi, ctx_len, BLOCK_N: gl.constexpr):
    """_visible transposed: the [BLOCK_N, rows] mask of the tile at `start`, tokens down."""
    pos = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, bits.type.layout.parent))
    j = pos - ctx_len
    shift = gl.minimum(gl.maximum(j, 0), 63).to(gl.int64)
    tree = ((bits[None, :] >> shift[:, None]) & 1) != 0
    return (pos < hi)[:, None] & ((j < 0)[:, None] | tree)


_DESCRIPTORS: OrderedDict = OrderedDict()  # the last few caches' descriptors (building them costs host time)


def descriptors(inp: VerifyInputs, block_n: int,
                lat_cols: int | None = None) -> tuple[TensorDescriptor, TensorDescriptor]:
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


def launch(kernel, inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
           lat_cols: int | None = None, items: torch.Tensor | None = None, out: torch.Tensor | None = None,
           stamps: tuple | None = None) -> None:
    """Launch a Gluon split kernel as its path planned `spec`; its latent tiles arrive `lat_cols` wide
    (default: all of them); items, out: the batch schedule's item table and the output (ITEMS); stamps: the
    in-kernel timeline's (buffer, tiles) (kernels/fast/timeline.py), or None."""
    extra = {} if stamps is None else {"Stamps": stamps[0], "STAMP_TILES": stamps[1]}
    k_lat, k_pe = descriptors(inp, spec.constexprs["BLOCK_N"], lat_cols)
    values = dict(split_args(inp, spec, part_o, part_lse, items, out), KLat=k_lat, KPe=k_pe, **extra)
    kernel[spec.grid](**spec.arguments(values))  # num_warps among the constexprs: the launch option and the kernel's

