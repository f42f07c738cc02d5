"""Removal experiments of the Triton kernels (roofline/pipelines/removal_experiment.py): the scores and the tile
update with one part of the work compiled out, wrong results on purpose. With both switches off
these are exactly the kernels' own code (tl.dot scores, kernels.softmax.online_softmax_update).

- NO_MMA: no tl.dot. A token's score is the sum of its K row (latent and rope dims), the same for
  every query row: the loaded tiles are still read in full, so the compiler keeps their loads (a tile
  that came by TMA is read from shared memory into registers for it, where the MMA read it in place);
  the softmax stays; O gets no P V (only its rescale).
- NO_SOFTMAX: P = the raw scaled scores (masked entries 0), no running max, no exp, O not rescaled,
  l not summed. The row max stays -inf (a split kernel's LSEs are -inf: its combine writes zeros).
- Both (loads only): P's row sums go into l, the one use of P left, so that the loads stay live.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kernels.softmax import online_softmax_update


@triton.jit
def tile_scores(q_lat, q_pe, k_lat, k_pe, NO_MMA: tl.constexpr):
    """Q K^T of a row tile and a KV tile (unscaled); NO_MMA: each token's K row sum, broadcast over the rows."""
    if NO_MMA:
        k_sum = tl.sum(k_lat.to(tl.float32), 1) + tl.sum(k_pe.to(tl.float32), 1)
        qk = tl.zeros([q_lat.shape[0], k_lat.shape[0]], dtype=tl.float32) + k_sum[None, :]
    else:
        qk = tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_pe, tl.trans(k_pe))
    return qk


@triton.jit
def tile_update(qk, m_i, l_i, acc, v, NO_MMA: tl.constexpr, NO_SOFTMAX: tl.constexpr):
    """online_softmax_update, or its cut version (see the module)."""
    if NO_SOFTMAX:
        p = tl.where(qk == float("-inf"), 0.0, qk)
        if NO_MMA:
            l_i = l_i + tl.sum(p, 1)
        else:
            acc = acc + tl.dot(p.to(v.dtype), v)
    else:
        m_i, l_i, acc = online_softmax_update(qk, m_i, l_i, acc, v, NO_MMA)
    return m_i, l_i, acc
