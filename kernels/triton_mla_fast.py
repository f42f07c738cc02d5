"""`triton_mla_fast`: the verify kernel a performance engineer would write.

- All q_len x heads query rows of a request form the matrix M dimension (as FlashMLA folds
  s_q x h), so every KV tile a program loads serves every query row of its M block.
- The request's tokens (prefix, then the draft tokens) are cut into splits of `split_len`
  tokens, enough programs to fill the GPU at batch 1; the grid runs M blocks fastest, so the
  programs that share a split run side by side and the second read of a tile hits L2.
- Tiles are BLOCK_N consecutive token positions: with page_size >= BLOCK_N a tile is part of one
  page (one page-table entry), with page_size 16 it is BLOCK_N/16 whole pages.
- tl.dot on bf16 tiles (tensor cores), online softmax in fp32, the draft-tree mask on the tail
  tile(s) only, and a combine kernel that merges the splits by log-sum-exp.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.combine import combine_splits
from kernels.inputs import VerifyInputs
from kernels.launch import device_facts, fast_specs
from kernels.plan import FAST_DEFAULTS, FAST_MIN_SPLIT_LEN
from kernels.softmax import LN2, LOG2E, online_softmax_update

@triton.jit
def _fast_split_kernel(Q, KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len,
                       stride_pt, total_rows,
                       HEADS: tl.constexpr, Q_LEN: tl.constexpr, PAGE_SIZE: tl.constexpr,
                       D_LATENT: tl.constexpr, D_ROPE: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    mb = tl.program_id(0)
    split = tl.program_id(1)
    b = tl.program_id(2)
    M: tl.constexpr = Q_LEN * HEADS
    D: tl.constexpr = D_LATENT + D_ROPE

    rows = mb * BLOCK_M + tl.arange(0, BLOCK_M)
    r_ok = rows < M
    q_tok = rows // HEADS  # which draft token each row belongs to
    offs_d = tl.arange(0, D_LATENT)
    offs_r = tl.arange(0, D_ROPE)
    q_rows = (b * M + rows).to(tl.int64) * D
    q_lat = tl.load(Q + q_rows[:, None] + offs_d[None, :], mask=r_ok[:, None], other=0.0)
    q_pe = tl.load(Q + q_rows[:, None] + D_LATENT + offs_r[None, :], mask=r_ok[:, None], other=0.0)

    kv_len = tl.load(KVLens + b)
    ctx_len = kv_len - Q_LEN
    lo = split * split_len
    hi = tl.minimum(lo + split_len, kv_len)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D_LATENT], dtype=tl.float32)
    for start in range(lo, hi, BLOCK_N):
        pos = start + tl.arange(0, BLOCK_N)
        n_ok = pos < hi
        page = tl.load(PageTable + b * stride_pt + pos // PAGE_SIZE, mask=n_ok, other=0)
        tok = page.to(tl.int64) * PAGE_SIZE + pos % PAGE_SIZE
        k_lat = tl.load(KV + tok[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
        k_pe = tl.load(KV + tok[:, None] * D + D_LATENT + offs_r[None, :], mask=n_ok[:, None], other=0.0)
        qk = tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_pe, tl.trans(k_pe))
        # Tree mask: only tail tiles have draft positions (j >= 0); prefix tiles load nothing.
        j = pos - ctx_len
        vis = tl.load(TreeMask + (b * Q_LEN + q_tok[:, None]) * Q_LEN + j[None, :],
                      mask=r_ok[:, None] & n_ok[None, :] & (j >= 0)[None, :], other=0)
        keep = n_ok[None, :] & ((j < 0)[None, :] | (vis != 0))
        qk = tl.where(keep, qk * qk_scale, float("-inf"))
        m_i, l_i, acc = online_softmax_update(qk, m_i, l_i, acc, k_lat)

    out_rows = b * M + rows
    # m_i is in log2 units: lse (natural) = (m_i + log2(l_i)) / log2(e)
    lse = tl.where(l_i > 0, (m_i + tl.math.log2(l_i)) * LN2, float("-inf"))
    tl.store(PartLse + split * total_rows + out_rows, lse, mask=r_ok)
    o = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(PartO + (split * total_rows + out_rows.to(tl.int64))[:, None] * D_LATENT + offs_d[None, :],
             o, mask=r_ok[:, None])


DEFAULTS = FAST_DEFAULTS


def triton_mla_fast(inp: VerifyInputs, split_len: int | None = None, min_split_len: int = FAST_MIN_SPLIT_LEN,
                    **launch) -> torch.Tensor:
    """Split-KV verify with all query rows of a request sharing each KV tile.

    Launch parameters (block_m, block_n, num_warps, num_stages, programs_per_sm): `launch`,
    else kernels.launch.fast_launch_config for this GPU and architecture (tuned entries in
    kernels/data/tuned.json, else the architecture's default).
    """
    w = inp.workload
    if w.page_size & (w.page_size - 1):
        raise ValueError(f"triton_mla_fast needs a power-of-two page_size (1, 16, 64, ...), got {w.page_size}")
    if w.v_dim & (w.v_dim - 1) or w.rope_dim & (w.rope_dim - 1):
        raise ValueError("triton_mla_fast needs power-of-two kv_lora_rank and rope_dim (MLA: 512 + 64)")
    device_name, sm_count, arch = device_facts(inp.q.device)
    split, combine = fast_specs(w, arch=arch, sm_count=sm_count, device_name=device_name, split_len=split_len,
                                min_split_len=min_split_len, **launch)
    splits, total_rows = split.grid[1], split.int_args["total_rows"]
    dev = inp.q.device
    part_o = torch.empty(splits, total_rows, w.v_dim, dtype=torch.float32, device=dev)
    part_lse = torch.empty(splits, total_rows, dtype=torch.float32, device=dev)
    _fast_split_kernel[split.grid](
        inp.q, inp.kv_cache, inp.page_table, inp.kv_lens, inp.tree_mask, part_o, part_lse,
        inp.sm_scale * LOG2E, split.int_args["split_len"], inp.page_table.stride(0), total_rows,
        **split.constexprs, num_warps=split.num_warps, num_stages=split.num_stages)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=dev)
    return combine_splits(part_o, part_lse, out, spec=combine)
