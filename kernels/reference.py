"""`torch_ref`: plain PyTorch verify attention in fp32, read through the page table; `lse_merge`: the split-KV merge."""

from __future__ import annotations

import torch

from kernels.inputs import VerifyInputs


def torch_ref(inp: VerifyInputs) -> torch.Tensor:
    """Output [batch * q_len, heads, v_dim] in the input dtype.

    Each draft token sees the whole prefix, then among the draft tokens itself and its
    ancestors (`tree_mask`). Math in fp32; one request at a time, so memory stays small.
    """
    w = inp.workload
    outs = []
    for b, kv_len in enumerate(w.kv_lens):
        ctx = kv_len - w.q_len
        pos = torch.arange(kv_len, device=inp.kv_cache.device)
        pages = inp.page_table[b, pos // w.page_size].long()
        kv = inp.kv_cache[pages, pos % w.page_size].float()  # [kv_len, head_dim]
        q = inp.q[b * w.q_len : (b + 1) * w.q_len].float()  # [q_len, heads, head_dim]
        scores = torch.einsum("shd,nd->hsn", q, kv) * inp.sm_scale
        visible = torch.ones(w.q_len, kv_len, dtype=torch.bool, device=kv.device)
        visible[:, ctx:] = inp.tree_mask[b].bool()
        scores = scores.masked_fill(~visible, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        outs.append(torch.einsum("hsn,nd->shd", probs, kv[:, : w.v_dim]))
    return torch.cat(outs).to(inp.q.dtype)


def lse_merge(part_o: torch.Tensor, part_lse: torch.Tensor) -> torch.Tensor:
    """The split-KV merge in torch, fp32: partials [splits, rows, d] weighted by softmax(lse) over the splits; 0
    for a row no split saw (all -inf). What kernels/combine.py computes."""
    w = torch.nan_to_num(torch.softmax(part_lse.float(), dim=0), nan=0.0)
    return torch.einsum("sr,srd->rd", w, part_o.float())
