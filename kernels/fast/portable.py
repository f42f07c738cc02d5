"""`triton_mla_fast`'s portable path: the verify kernel a performance engineer would write, in Triton.

- All q_len x heads query rows of a request form the matrix M dimension (as FlashMLA folds
  s_q x h), so every KV tile a program loads serves every query row of its M block.
- No padded M block where it can be avoided: with `tail_m` the M rows are one BLOCK_M tile plus
  one small tile in the same program (72 rows = 64 + 16, not 128), so each KV tile is loaded
  once and multiplied against 80 rows.
- The request's tokens (prefix, then the draft tokens) are cut into splits of `split_len`
  tokens, enough programs to fill the GPU at batch 1 (the split count comes from the GPU's SM
  count); the grid runs M blocks fastest, so programs that share a split run side by side and
  the second read of a tile hits L2.
- Tiles are BLOCK_N consecutive token positions: with page_size >= BLOCK_N a tile is part of one
  page (one page-table entry), with page_size 16 it is BLOCK_N/16 whole pages.
- tl.dot on bf16 tiles (tensor cores), online softmax in fp32, the draft-tree mask on the tail
  tile(s) only, partials in fp32 or the input dtype, and a combine kernel that merges the splits by LSE.

On sm_90 the Gluon paths (kernels/fast/seesaw.py, ring.py) are chosen by compute
capability (kernels.plan.code_path); the Triton TMA kernel (kernels/fast/hopper.py) runs when asked
for; this module's kernel runs everywhere else and in the interpreter. Grid, constexprs and warps of
every launch come from the path's spec (kernels/fast/paths.py), the same specs `roofline compile`
cross-compiles.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.cuts import tile_scores, tile_update
from kernels.fast.common import NO_MMA_STAGES, schedule_args
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec
from kernels.softmax import LN2, LOG2E

_NO_MMA_STAGES = tl.constexpr(NO_MMA_STAGES)


@triton.jit
def _load_q(Q, q_rows, r_ok, D: tl.constexpr, D_LATENT: tl.constexpr, D_ROPE: tl.constexpr):
    offs_d = tl.arange(0, D_LATENT)
    offs_r = tl.arange(0, D_ROPE)
    base = q_rows.to(tl.int64) * D
    q_lat = tl.load(Q + base[:, None] + offs_d[None, :], mask=r_ok[:, None], other=0.0)
    q_pe = tl.load(Q + base[:, None] + D_LATENT + offs_r[None, :], mask=r_ok[:, None], other=0.0)
    return q_lat, q_pe


@triton.jit
def _row_tile(Q, b, row0, ROWS: tl.constexpr, M: tl.constexpr, D_LATENT: tl.constexpr, D_ROPE: tl.constexpr):
    """A tile of ROWS query rows from row0: (rows, r_ok, q_lat, q_pe) and its empty softmax state
    (m_i, l_i, acc)."""
    rows = row0 + tl.arange(0, ROWS)
    r_ok = rows < M
    q_lat, q_pe = _load_q(Q, b * M + rows, r_ok, D_LATENT + D_ROPE, D_LATENT, D_ROPE)
    m_i = tl.full([ROWS], float("-inf"), dtype=tl.float32)
    return rows, r_ok, q_lat, q_pe, m_i, tl.zeros([ROWS], dtype=tl.float32), tl.zeros([ROWS, D_LATENT], dtype=tl.float32)


@triton.jit
def _split_range(KVLens, b, split, split_len, Q_LEN: tl.constexpr, BLOCK_N: tl.constexpr):
    """(ctx_len, lo, hi, full_hi): the split covers tokens [lo, hi); [lo, full_hi) are whole prefix
    tiles (no bounds or tree masks), [full_hi, hi) a partial tile and the draft tokens."""
    kv_len = tl.load(KVLens + b)
    ctx_len = kv_len - Q_LEN
    lo = split * split_len
    hi = tl.minimum(lo + split_len, kv_len)
    return ctx_len, lo, hi, lo + tl.maximum(tl.minimum(hi, ctx_len) - lo, 0) // BLOCK_N * BLOCK_N


@triton.jit
def _masked_kv_tile(KV, PageTable, b, stride_pt, start, hi, PAGE_SIZE: tl.constexpr, D_LATENT: tl.constexpr,
                    D_ROPE: tl.constexpr, BLOCK_N: tl.constexpr, NO_GATHER: tl.constexpr):
    """Tokens [start, start + BLOCK_N), each through its page-table entry, zeros from `hi` on:
    (pos, n_ok, k_lat, k_pe). NO_GATHER: every load masked off (pos < 0 never holds), so nothing is
    read and the tile is all zeros; the code keeps its shape (constant zero tiles let Triton stage the
    tiles differently: 360 KB of shared memory for the hopper kernel, past the H200's 227 KB)."""
    D: tl.constexpr = D_LATENT + D_ROPE
    pos = start + tl.arange(0, BLOCK_N)
    n_ok = pos < hi
    ld_ok = n_ok & (pos < 0) if NO_GATHER else n_ok
    page = tl.load(PageTable + b * stride_pt + pos // PAGE_SIZE, mask=ld_ok, other=0)
    tok = page.to(tl.int64) * PAGE_SIZE + pos % PAGE_SIZE
    k_lat = tl.load(KV + tok[:, None] * D + tl.arange(0, D_LATENT)[None, :], mask=ld_ok[:, None], other=0.0)
    k_pe = tl.load(KV + tok[:, None] * D + D_LATENT + tl.arange(0, D_ROPE)[None, :], mask=ld_ok[:, None],
                   other=0.0)
    return pos, n_ok, k_lat, k_pe


@triton.jit
def _masked_scores(q_lat, q_pe, k_lat, k_pe, rows, r_ok, pos, n_ok, ctx_len, b, TreeMask, qk_scale,
                   HEADS: tl.constexpr, Q_LEN: tl.constexpr, NO_MMA: tl.constexpr):
    """Scores of one row tile against one KV tile, scaled to log2 units, masked to -inf."""
    qk = tile_scores(q_lat, q_pe, k_lat, k_pe, NO_MMA)
    # Tree mask: only tail tiles have draft positions (j >= 0); prefix tiles load nothing.
    q_tok = rows // HEADS
    j = pos - ctx_len
    vis = tl.load(TreeMask + (b * Q_LEN + q_tok[:, None]) * Q_LEN + j[None, :],
                  mask=r_ok[:, None] & n_ok[None, :] & (j >= 0)[None, :], other=0)
    keep = n_ok[None, :] & ((j < 0)[None, :] | (vis != 0))
    return tl.where(keep, qk * qk_scale, float("-inf"))


@triton.jit
def _store_partial(PartO, PartLse, m_i, l_i, acc, rows, r_ok, split, b, total_rows,
                   M: tl.constexpr, D_LATENT: tl.constexpr):
    out_rows = b * M + rows
    # m_i is in log2 units: lse (natural) = (m_i + log2(l_i)) / log2(e)
    lse = tl.where(l_i > 0, (m_i + tl.math.log2(l_i)) * LN2, float("-inf"))
    tl.store(PartLse + split * total_rows + out_rows, lse, mask=r_ok)
    o = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    offs_d = tl.arange(0, D_LATENT)
    tl.store(PartO + (split * total_rows + out_rows.to(tl.int64))[:, None] * D_LATENT + offs_d[None, :],
             o.to(PartO.dtype.element_ty), mask=r_ok[:, None])


@triton.jit
def _item(Items, item):
    """Work item `item` of the batch schedule (a row of Items: request, lo, hi, ctx_len, slot;
    kernels.fast.common.plan_batch): (b, ctx_len, lo, hi)."""
    row = Items + item * 5
    return tl.load(row), tl.load(row + 3), tl.load(row + 1), tl.load(row + 2)


@triton.jit
def _item_out(Items, item, M: tl.constexpr):
    """Where item `item`'s rows go, read again from its row of Items (nothing held through the loop): (b, split,
    total_rows) such that the partial stores' split x total_rows + b x M is its slot x M; total_rows 0 where it
    is its request's only item (slot -1: its rows go to the output, b x M + row)."""
    b = tl.load(Items + item * 5)
    slot = tl.load(Items + item * 5 + 4)
    return b, slot - b, tl.where(slot < 0, 0, M)


@triton.jit
def _store_out(Out, l_i, acc, rows, r_ok, b, M: tl.constexpr, D_LATENT: tl.constexpr):
    """A request's only item: its rows normalised, straight into the output (no LSE, no combine)."""
    o = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    offs_d = tl.arange(0, D_LATENT)
    tl.store(Out + (b * M + rows.to(tl.int64))[:, None] * D_LATENT + offs_d[None, :], o.to(Out.dtype.element_ty),
             mask=r_ok[:, None])


@triton.jit
def _split_program(Q, KLat, KPe, args, HEADS: tl.constexpr, Q_LEN: tl.constexpr, PAGE_SIZE: tl.constexpr,
                   D_LATENT: tl.constexpr, D_ROPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   TAIL_M: tl.constexpr, EVICT: tl.constexpr, TMA: tl.constexpr, NO_MMA: tl.constexpr,
                   NO_SOFTMAX: tl.constexpr, NO_GATHER: tl.constexpr, ITEMS: tl.constexpr):
    """One program of grid (m_blocks, splits, batch), either Triton kernel's, `args` the launch's tuple
    (kernels.fast.paths.SPLIT_ARGS; split_args builds it). TAIL_M > 0: one M block of
    BLOCK_M rows plus a second tile of TAIL_M rows (rows BLOCK_M..BLOCK_M+TAIL_M-1), both fed by the
    same KV tile loads. Whole prefix tiles come by TMA through the descriptors KLat, KPe (TMA: one
    box per part, one page-table entry a tile) or by per-token gathers from KV (eviction policy EVICT).

    Removal experiments (off: the kernel's own code): NO_MMA, NO_SOFTMAX as kernels/cuts.py says (the
    tile loads stay, each token's K row summed in place of its scores; under NO_MMA the prefix loop names
    its stages, NO_MMA_STAGES, so that Triton still pipelines the loads no tl.dot reads); NO_GATHER leaves out the
    per-token gathers of the tiles past the whole prefix ones (the partial tile, the draft tokens: zeros
    instead). Only the TMA kernel has it: the portable kernel's every tile load is a gather.

    ITEMS (the batch schedule, kernels.fast.common.plan_batch): grid (m_blocks, items); program_id(1) is a row
    of the table Items (request, lo, hi, ctx_len, slot), and the partials go to rows slot x M.. (`split` =
    slot - request with `total_rows` = M, so the stores' split x total_rows + request x M is slot x M), or,
    where the request has no other item (slot -1), straight to the output Out."""
    KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len, stride_pt, total_rows, Items, Out = args
    mb = tl.program_id(0)
    split = tl.program_id(1)
    b = tl.program_id(2)
    M: tl.constexpr = Q_LEN * HEADS
    D: tl.constexpr = D_LATENT + D_ROPE
    if ITEMS:  # split: the item's index
        b, ctx_len, lo, hi = _item(Items, split)
        full_hi = lo + tl.maximum(tl.minimum(hi, ctx_len) - lo, 0) // BLOCK_N * BLOCK_N

    rows, r_ok, q_lat, q_pe, m_i, l_i, acc = _row_tile(Q, b, mb * BLOCK_M, BLOCK_M, M, D_LATENT, D_ROPE)
    if TAIL_M > 0:
        rows2, r_ok2, q_lat2, q_pe2, m_i2, l_i2, acc2 = _row_tile(Q, b, BLOCK_M, TAIL_M, M, D_LATENT, D_ROPE)
    if not ITEMS:
        ctx_len, lo, hi, full_hi = _split_range(KVLens, b, split, split_len, Q_LEN, BLOCK_N)
    if not TMA:
        offs_d = tl.arange(0, D_LATENT)
        offs_r = tl.arange(0, D_ROPE)
    # Whole prefix tiles first: no bounds masks and no tree mask (fewer registers in the hot
    # loop); then the rest of the split (a partial tile, the draft tokens) with both.
    for start in tl.range(lo, full_hi, BLOCK_N, num_stages=_NO_MMA_STAGES if NO_MMA else None):
        if TMA:
            page = tl.load(PageTable + b * stride_pt + start // PAGE_SIZE)
            row0 = page * PAGE_SIZE + start % PAGE_SIZE
            k_lat = KLat.load([row0, 0])
            k_pe = KPe.load([row0, 0])
        else:
            pos = start + tl.arange(0, BLOCK_N)
            page = tl.load(PageTable + b * stride_pt + pos // PAGE_SIZE)
            tok = page.to(tl.int64) * PAGE_SIZE + pos % PAGE_SIZE
            k_lat = tl.load(KV + tok[:, None] * D + offs_d[None, :], eviction_policy=EVICT)
            k_pe = tl.load(KV + tok[:, None] * D + D_LATENT + offs_r[None, :], eviction_policy=EVICT)
        qk = tile_scores(q_lat, q_pe, k_lat, k_pe, NO_MMA) * qk_scale
        m_i, l_i, acc = tile_update(qk, m_i, l_i, acc, k_lat, NO_MMA, NO_SOFTMAX)
        if TAIL_M > 0:
            qk2 = tile_scores(q_lat2, q_pe2, k_lat, k_pe, NO_MMA) * qk_scale
            m_i2, l_i2, acc2 = tile_update(qk2, m_i2, l_i2, acc2, k_lat, NO_MMA, NO_SOFTMAX)
    for start in range(full_hi, hi, BLOCK_N):
        pos, n_ok, k_lat, k_pe = _masked_kv_tile(KV, PageTable, b, stride_pt, start, hi, PAGE_SIZE, D_LATENT, D_ROPE,
                                                 BLOCK_N, NO_GATHER)
        qk = _masked_scores(q_lat, q_pe, k_lat, k_pe, rows, r_ok, pos, n_ok, ctx_len, b, TreeMask, qk_scale,
                            HEADS, Q_LEN, NO_MMA)
        m_i, l_i, acc = tile_update(qk, m_i, l_i, acc, k_lat, NO_MMA, NO_SOFTMAX)
        if TAIL_M > 0:
            qk2 = _masked_scores(q_lat2, q_pe2, k_lat, k_pe, rows2, r_ok2, pos, n_ok, ctx_len, b, TreeMask,
                                 qk_scale, HEADS, Q_LEN, NO_MMA)
            m_i2, l_i2, acc2 = tile_update(qk2, m_i2, l_i2, acc2, k_lat, NO_MMA, NO_SOFTMAX)

    if ITEMS:
        b, split, total_rows = _item_out(Items, split, M)
        if total_rows == 0:  # the request's only item: its output, no partial
            _store_out(Out, l_i, acc, rows, r_ok, b, M, D_LATENT)
            if TAIL_M > 0:
                _store_out(Out, l_i2, acc2, rows2, r_ok2, b, M, D_LATENT)
        else:
            _store_partial(PartO, PartLse, m_i, l_i, acc, rows, r_ok, split, b, total_rows, M, D_LATENT)
            if TAIL_M > 0:
                _store_partial(PartO, PartLse, m_i2, l_i2, acc2, rows2, r_ok2, split, b, total_rows, M, D_LATENT)
    else:
        _store_partial(PartO, PartLse, m_i, l_i, acc, rows, r_ok, split, b, total_rows, M, D_LATENT)
        if TAIL_M > 0:
            _store_partial(PartO, PartLse, m_i2, l_i2, acc2, rows2, r_ok2, split, b, total_rows, M, D_LATENT)


@triton.jit
def _fast_split_kernel(Q, args, HEADS: tl.constexpr, Q_LEN: tl.constexpr, PAGE_SIZE: tl.constexpr,
                       D_LATENT: tl.constexpr, D_ROPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       TAIL_M: tl.constexpr, EVICT: tl.constexpr, NO_MMA: tl.constexpr, NO_SOFTMAX: tl.constexpr,
                       ITEMS: tl.constexpr):
    """Grid (m_blocks, splits, batch), or with ITEMS (m_blocks, items) over the batch schedule's table Items
    (Out: the output, for a request's only item; both None without ITEMS); KV tiles gathered token by token
    (see _split_program; no NO_GATHER: every tile load is a gather)."""
    _split_program(Q, None, None, args, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N, TAIL_M, EVICT,
                   False, NO_MMA, NO_SOFTMAX, False, ITEMS)


def split_args(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
               items: torch.Tensor | None, out: torch.Tensor | None) -> dict:
    """A split launch's runtime arguments by name, the TMA descriptors aside (each launcher builds its own): the
    query and kernels.fast.paths.SPLIT_ARGS' (spec.arguments gathers the latter into the tuple `args`)."""
    return dict(Q=inp.q, KV=inp.kv_cache, PageTable=inp.page_table, KVLens=inp.kv_lens, TreeMask=inp.tree_mask,
                PartO=part_o, PartLse=part_lse, qk_scale=inp.sm_scale * LOG2E, split_len=spec.int_args["split_len"],
                stride_pt=inp.page_table.stride(0), total_rows=spec.int_args["total_rows"],
                **schedule_args(spec, items, out))


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
           items: torch.Tensor | None = None, out: torch.Tensor | None = None) -> None:
    """Launch `_fast_split_kernel` as kernels.fast.paths planned `spec` (items, out: the batch schedule's)."""
    _fast_split_kernel[spec.grid](**spec.arguments(split_args(inp, spec, part_o, part_lse, items, out)),
                                  num_warps=spec.num_warps, num_stages=spec.num_stages)
