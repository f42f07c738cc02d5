"""`triton_mla_decode`: SGLang's split-KV decode path for MLA, applied to verify (shape, not code).

Each of the q_len draft tokens is a decode row (domain.md section 1):
- stage 1, grid (batch * q_len, cdiv(heads, BLOCK_H), kv_splits): BLOCK_H=16 heads of one row
  share each BLOCK_N=32 tile of that row's tokens, read through the per-token index; the row's
  tokens (prefix, then the draft tokens its tree mask shows) are cut into kv_splits ranges;
  fp32 partial outputs and their log-sum-exp go to a scratch buffer;
- stage 2 merges the splits (kernels/combine.py).
Every draft row re-reads the whole prefix: q_len times the KV bytes of the floor.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.combine import combine_splits
from kernels.inputs import VerifyInputs
from kernels.launch import decode_specs
from kernels.plan import DECODE_BLOCK_H, DECODE_KV_SPLITS
from kernels.softmax import LN2, LOG2E, online_softmax_update
from kernels.triton_mla import _slot_rows


@triton.jit
def _decode_stage1(Q, KV, TokenSlots, KVIndptr, TreeMask, PartO, PartLse, qk_scale,
                   stride_qt, stride_qh, stride_kv, total_rows,
                   HEADS: tl.constexpr, Q_LEN: tl.constexpr, D_LATENT: tl.constexpr, D_ROPE: tl.constexpr,
                   BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, KV_SPLITS: tl.constexpr):
    row = tl.program_id(0)  # b * Q_LEN + i
    hb = tl.program_id(1)
    split = tl.program_id(2)
    b = row // Q_LEN
    i = row % Q_LEN

    heads = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = heads < HEADS
    offs_d = tl.arange(0, D_LATENT)
    offs_r = tl.arange(0, D_ROPE)
    q_off = row * stride_qt + heads * stride_qh
    q_lat = tl.load(Q + q_off[:, None] + offs_d[None, :], mask=h_ok[:, None], other=0.0)
    q_pe = tl.load(Q + q_off[:, None] + D_LATENT + offs_r[None, :], mask=h_ok[:, None], other=0.0)

    kv_start = tl.load(KVIndptr + b)
    kv_len = tl.load(KVIndptr + b + 1) - kv_start
    ctx_len = kv_len - Q_LEN
    split_len = tl.cdiv(kv_len, KV_SPLITS)
    lo = split * split_len
    hi = tl.minimum(lo + split_len, kv_len)

    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, D_LATENT], dtype=tl.float32)
    for start in range(lo, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        n_ok = offs_n < hi
        j = offs_n - ctx_len  # draft index where >= 0
        vis = tl.load(TreeMask + (b * Q_LEN + i) * Q_LEN + j, mask=n_ok & (j >= 0), other=0)
        keep = n_ok & ((j < 0) | (vis != 0))
        k_lat, k_pe = _slot_rows(KV, TokenSlots + kv_start, offs_n, n_ok, stride_kv, offs_d, offs_r, D_LATENT)
        qk = tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_pe, tl.trans(k_pe))
        qk = tl.where(keep[None, :], qk * qk_scale, float("-inf"))
        m_i, l_i, acc = online_softmax_update(qk, m_i, l_i, acc, k_lat)

    out_rows = row * HEADS + heads
    lse = tl.where(l_i > 0, (m_i + tl.math.log2(l_i)) * LN2, float("-inf"))  # natural log
    tl.store(PartLse + split * total_rows + out_rows, lse, mask=h_ok)
    o = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(PartO + (split * total_rows + out_rows.to(tl.int64))[:, None] * D_LATENT + offs_d[None, :],
             o, mask=h_ok[:, None])


def triton_mla_decode(inp: VerifyInputs, kv_splits: int = DECODE_KV_SPLITS, block_h: int = DECODE_BLOCK_H,
                      block_n: int = 32,
                      num_warps: int = 4, num_stages: int = 2) -> torch.Tensor:
    """Split-KV decode over every draft row; returns [batch * q_len, heads, v_dim]."""
    w = inp.workload
    stage1, combine = decode_specs(w, kv_splits=kv_splits, block_h=block_h, block_n=block_n,
                                   num_warps=num_warps, num_stages=num_stages)
    total_rows = stage1.int_args["total_rows"]
    part_o = torch.empty(kv_splits, total_rows, w.v_dim, dtype=torch.float32, device=inp.q.device)
    part_lse = torch.empty(kv_splits, total_rows, dtype=torch.float32, device=inp.q.device)
    kv = inp.kv_cache.view(-1, w.head_dim)
    _decode_stage1[stage1.grid](
        inp.q, kv, inp.token_slots, inp.kv_indptr, inp.tree_mask, part_o, part_lse, inp.sm_scale * LOG2E,
        inp.q.stride(0), inp.q.stride(1), kv.stride(0), total_rows,
        **stage1.constexprs, num_warps=stage1.num_warps, num_stages=stage1.num_stages)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    return combine_splits(part_o, part_lse, out, spec=combine)
