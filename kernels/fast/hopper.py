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

from kernels.fast.portable import _split_program, split_args
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec


@triton.jit
def _hopper_split_kernel(Q, KLat, KPe, args, HEADS: tl.constexpr, Q_LEN: tl.constexpr, PAGE_SIZE: tl.constexpr,
                         D_LATENT: tl.constexpr, D_ROPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         TAIL_M: tl.constexpr, NO_MMA: tl.constexpr, NO_SOFTMAX: tl.constexpr,
                         NO_GATHER: tl.constexpr, ITEMS: tl.constexpr):
    """Grid (m_blocks, splits, batch), or with ITEMS the batch schedule's (m_blocks, items); whole prefix tiles
    by TMA (see portable._split_program, and there the removal experiments NO_MMA, NO_SOFTMAX, NO_GATHER)."""
    _split_program(Q, KLat, KPe, args, HEADS, Q_LEN, PAGE_SIZE, D_LATENT, D_ROPE, BLOCK_M, BLOCK_N, TAIL_M, "", True,
                   NO_MMA, NO_SOFTMAX, NO_GATHER, ITEMS)


def launch(inp: VerifyInputs, spec: LaunchSpec, part_o: torch.Tensor, part_lse: torch.Tensor,
           items: torch.Tensor | None = None, out: torch.Tensor | None = None) -> None:
    """Launch `_hopper_split_kernel` as kernels.fast.paths planned `spec` (grid, constexprs; items, out: the
    batch schedule's)."""
    w = inp.workload
    block_n = spec.constexprs["BLOCK_N"]
    kv2d = inp.kv_cache.view(-1, w.head_dim)
    k_lat = TensorDescriptor(kv2d, [kv2d.shape[0], w.v_dim], [w.head_dim, 1], [block_n, w.v_dim])
    k_pe = TensorDescriptor(kv2d[:, w.v_dim:], [kv2d.shape[0], w.rope_dim], [w.head_dim, 1], [block_n, w.rope_dim])
    values = dict(split_args(inp, spec, part_o, part_lse, items, out), KLat=k_lat, KPe=k_pe)
    _hopper_split_kernel[spec.grid](**spec.arguments(values), num_warps=spec.num_warps, num_stages=spec.num_stages)
