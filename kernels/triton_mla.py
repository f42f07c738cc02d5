"""`triton_mla`: the baseline, shaped like SGLang's Triton backend runs MLA target verify.

SGLang sends verify through its prefill ("extend") kernel with the draft tree as a custom
mask (domain.md section 1). The shape reproduced here, not the code:
- grid (batch, heads, cdiv(q_len, BLOCK_M)): at batch 1, 8 heads and 9 draft tokens that is
  8 programs on a 132-SM GPU;
- each program walks the whole prefix serially in BLOCK_N tiles through a per-token index
  (`token_slots`, like SGLang's `kv_indices`), so every head re-reads the same latent KV;
- then the draft block under the tree mask; online softmax throughout.

Tiles (kernels.launch.EXTEND_BLOCKS, BLOCK_M x BLOCK_N at 8 warps and 1 stage): SGLang's Hopper pick for
MLA, 32 x 64, on sm_90 and sm_100. On sm_120 this kernel departs from SGLang: SGLang picks 32 x 32 for
capability 12, which under Triton 3.6 needs 102,400 B of shared memory per block, over sm_120's 101,376 B;
it runs 16 x 32 (83,968 B): the same KV tile and walk, and up to 16 draft rows the same grid.
`roofline compile --kernel triton_mla --arch sm_120` says so too.

Removal experiments (roofline/pipelines/removal_experiment.py): NO_MMA and NO_SOFTMAX (`no_mma`, `no_softmax`; off by
default, the code compiled then is the kernel's own) as kernels/cuts.py says: wrong results on purpose,
the loads stay. No NO_GATHER: every tile load is a gather through the token slots.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.cuts import tile_scores, tile_update
from kernels.inputs import VerifyInputs
from kernels.launch import extend_specs
from kernels.launch_spec import device_facts
from kernels.softmax import LOG2E


@triton.jit
def _slot_rows(KV, Slots, idx, ok, stride_kv, offs_d, offs_r, D_LATENT: tl.constexpr):
    """(k_lat, k_pe): the KV rows of the tokens whose slots are Slots[idx], zeros where not ok."""
    slot = tl.load(Slots + idx, mask=ok, other=0).to(tl.int64)
    k_lat = tl.load(KV + slot[:, None] * stride_kv + offs_d[None, :], mask=ok[:, None], other=0.0)
    k_pe = tl.load(KV + slot[:, None] * stride_kv + D_LATENT + offs_r[None, :], mask=ok[:, None], other=0.0)
    return k_lat, k_pe


@triton.jit
def _verify_extend_kernel(
    Q, KV, TokenSlots, KVIndptr, TreeMask, Out, qk_scale,
    stride_qt, stride_qh, stride_kv, stride_ot, stride_oh,
    Q_LEN: tl.constexpr, D_LATENT: tl.constexpr, D_ROPE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_Q: tl.constexpr,
    NO_MMA: tl.constexpr, NO_SOFTMAX: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    m_blk = tl.program_id(2)

    offs_m = m_blk * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = offs_m < Q_LEN
    offs_d = tl.arange(0, D_LATENT)
    offs_r = tl.arange(0, D_ROPE)
    q_rows = (b * Q_LEN + offs_m) * stride_qt + h * stride_qh
    q_lat = tl.load(Q + q_rows[:, None] + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    q_pe = tl.load(Q + q_rows[:, None] + D_LATENT + offs_r[None, :], mask=m_ok[:, None], other=0.0)

    kv_start = tl.load(KVIndptr + b)
    kv_len = tl.load(KVIndptr + b + 1) - kv_start
    ctx_len = kv_len - Q_LEN

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D_LATENT], dtype=tl.float32)

    # Stage 1: the whole prefix, one BLOCK_N tile at a time, gathered token by token.
    for start in range(0, ctx_len, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        n_ok = offs_n < ctx_len
        k_lat, k_pe = _slot_rows(KV, TokenSlots + kv_start, offs_n, n_ok, stride_kv, offs_d, offs_r, D_LATENT)
        qk = tile_scores(q_lat, q_pe, k_lat, k_pe, NO_MMA)
        qk = tl.where(n_ok[None, :], qk * qk_scale, float("-inf"))
        m_i, l_i, acc = tile_update(qk, m_i, l_i, acc, k_lat, NO_MMA, NO_SOFTMAX)

    # Stage 2: the draft tokens' own entries under the tree mask.
    offs_j = tl.arange(0, BLOCK_Q)
    j_ok = offs_j < Q_LEN
    k_lat, k_pe = _slot_rows(KV, TokenSlots + kv_start + ctx_len, offs_j, j_ok, stride_kv, offs_d, offs_r, D_LATENT)
    visible = tl.load(TreeMask + b * Q_LEN * Q_LEN + offs_m[:, None] * Q_LEN + offs_j[None, :],
                      mask=m_ok[:, None] & j_ok[None, :], other=0)
    qk = tile_scores(q_lat, q_pe, k_lat, k_pe, NO_MMA)
    qk = tl.where(visible != 0, qk * qk_scale, float("-inf"))
    m_i, l_i, acc = tile_update(qk, m_i, l_i, acc, k_lat, NO_MMA, NO_SOFTMAX)

    out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
    o_rows = (b * Q_LEN + offs_m) * stride_ot + h * stride_oh
    tl.store(Out + o_rows[:, None] + offs_d[None, :], out.to(Out.dtype.element_ty), mask=m_ok[:, None])


def triton_mla(inp: VerifyInputs, block_m: int | None = None, block_n: int | None = None,
               num_warps: int = 8, num_stages: int = 1, no_mma: bool = False, no_softmax: bool = False) -> torch.Tensor:
    """Run the extend-style verify kernel; returns [batch * q_len, heads, v_dim]. block_m, block_n: the
    device's architecture's tiles (see the module) unless given. no_mma, no_softmax: removal experiments
    (see the module), wrong results on purpose."""
    w = inp.workload
    if inp.q.shape[-1] != w.head_dim or w.rope_dim & (w.rope_dim - 1) or w.v_dim & (w.v_dim - 1):
        raise ValueError("triton_mla needs power-of-two kv_lora_rank and rope_dim (MLA: 512 + 64)")
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    kv = inp.kv_cache.view(-1, w.head_dim)
    (spec,) = extend_specs(w, arch=device_facts(inp.q.device)[2], block_m=block_m, block_n=block_n,
                           num_warps=num_warps, num_stages=num_stages, no_mma=no_mma, no_softmax=no_softmax)
    _verify_extend_kernel[spec.grid](
        inp.q, kv, inp.token_slots, inp.kv_indptr, inp.tree_mask, out, inp.sm_scale * LOG2E,
        inp.q.stride(0), inp.q.stride(1), kv.stride(0), out.stride(0), out.stride(1),
        **spec.constexprs, num_warps=spec.num_warps, num_stages=spec.num_stages,
    )
    return out
