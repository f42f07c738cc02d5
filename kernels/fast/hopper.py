"""triton_mla_fast's Hopper path (sm_90, page_size a multiple of BLOCK_N): KV tiles brought in by
TMA through tensor descriptors instead of per-thread address gathers.

A BLOCK_N-token tile of a page is one TMA box per part (latent, rope) addressed by one page-table
entry, so the hot loop holds no per-element addresses (registers the portable kernel spends on
them) and the loads are asynchronous copies tracked by mbarriers, pipelined over num_stages.
Everything else (row tiles, online softmax, tree mask on the draft tiles, partials, LSE merge)
is the portable kernel's. Runs when asked for (`path="hopper"`); on sm_90 the default is the
Gluon path (kernels/fast/seesaw.py, ring.py), elsewhere the portable one.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from kernels.fast.portable import _masked_kv_tile, _masked_scores, _row_tile, _split_range, _store_partial
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec
from kernels.softmax import LOG2E, online_softmax_update


@triton.jit
def _hopper_split_kernel(Q, KLat, KPe, KV, PageTable, KVLens, TreeMask, PartO, PartLse, qk_scale, split_len,
                         stride_pt, total_rows,
                         HEADS: tl.constexpr, Q_LEN: tl.constexpr, PAGE_SIZE: tl.constexpr,
                         D_LATENT: tl.constexpr, D_ROPE: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TAIL_M: tl.constexpr):
    mb = tl.program_id(0)
    split = tl.program_id(1)
    b = tl.program_id(2)
    M: tl.constexpr = Q_LEN * HEADS

    rows, r_ok, q_lat, q_pe, m_i, l_i, acc = _row_tile(Q, b, mb * BLOCK_M, BLOCK_M, M, D_LATENT, D_ROPE)
    if TAIL_M > 0:
        rows2, r_ok2, q_lat2, q_pe2, m_i2, l_i2, acc2 = _row_tile(Q, b, BLOCK_M, TAIL_M, M, D_LATENT, D_ROPE)
    ctx_len, lo, hi, full_hi = _split_range(KVLens, b, split, split_len, Q_LEN, BLOCK_N)
    for start in range(lo, full_hi, BLOCK_N):
        page = tl.load(PageTable + b * stride_pt + start // PAGE_SIZE)
        row0 = page * PAGE_SIZE + start % PAGE_SIZE
        k_lat = KLat.load([row0, 0])
        k_pe = KPe.load([row0, 0])
        qk = (tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_pe, tl.trans(k_pe))) * qk_scale
        m_i, l_i, acc = online_softmax_update(qk, m_i, l_i, acc, k_lat)
        if TAIL_M > 0:
            qk2 = (tl.dot(q_lat2, tl.trans(k_lat)) + tl.dot(q_pe2, tl.trans(k_pe))) * qk_scale
            m_i2, l_i2, acc2 = online_softmax_update(qk2, m_i2, l_i2, acc2, k_lat)
    for start in range(full_hi, hi, BLOCK_N):  # a partial tile and the draft tokens: masked loads
        pos, n_ok, k_lat, k_pe = _masked_kv_tile(KV, PageTable, b, stride_pt, start, hi, PAGE_SIZE, D_LATENT, D_ROPE,
                                                 BLOCK_N)
        qk = _masked_scores(q_lat, q_pe, k_lat, k_pe, rows, r_ok, pos, n_ok, ctx_len, b, TreeMask, qk_scale,
                            HEADS, Q_LEN)
        m_i, l_i, acc = online_softmax_update(qk, m_i, l_i, acc, k_lat)
        if TAIL_M > 0:
            qk2 = _masked_scores(q_lat2, q_pe2, k_lat, k_pe, rows2, r_ok2, pos, n_ok, ctx_len, b, TreeMask,
                                 qk_scale, HEADS, Q_LEN)
            m_i2, l_i2, acc2 = online_softmax_update(qk2, m_i2, l_i2, acc2, k_lat)

    _store_partial(PartO, PartLse, m_i, l_i, acc, rows, r_ok, split, b, total_rows, M, D_LATENT)
    if TAIL_M > 0:
        _store_partial(PartO, PartLse, m_i2, l_i2, acc2, rows2, r_ok2, split, b, total_rows, M, D_LATENT)


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor) -> None:
    """Launch `_hopper_split_kernel` as kernels.fast.paths planned `spec` (grid, constexprs)."""
    w = inp.workload
    block_n = spec.constexprs["BLOCK_N"]
    kv2d = inp.kv_cache.view(-1, w.head_dim)
    k_lat = TensorDescriptor(kv2d, [kv2d.shape[0], w.v_dim], [w.head_dim, 1], [block_n, w.v_dim])
    k_pe = TensorDescriptor(kv2d[:, w.v_dim:], [kv2d.shape[0], w.rope_dim], [w.head_dim, 1], [block_n, w.rope_dim])
    _hopper_split_kernel[spec.grid](
        inp.q, k_lat, k_pe, inp.kv_cache, inp.page_table, inp.kv_lens, inp.tree_mask, part_o, part_lse,
        inp.sm_scale * LOG2E, spec.int_args["split_len"], inp.page_table.stride(0), spec.int_args["total_rows"],
        **spec.constexprs, num_warps=spec.num_warps, num_stages=spec.num_stages)
