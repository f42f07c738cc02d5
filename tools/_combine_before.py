"""The combine kernel before the one-pass rewrite (for an A/B on the GPU; not shipped)."""
import triton
import triton.language as tl


@triton.jit
def _combine_before(PartO, PartLse, Out, total_rows, num_splits,
                    D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr):
    """One program per (row, BLOCK_D columns): enough programs to fill the GPU at batch 1."""
    row = tl.program_id(0)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_s = tl.arange(0, BLOCK_S)
    m = tl.max(tl.full([BLOCK_S], float("-inf"), dtype=tl.float32), 0)
    for s0 in range(0, num_splits, BLOCK_S):
        s = s0 + offs_s
        lse = tl.load(PartLse + s * total_rows + row, mask=s < num_splits, other=float("-inf"))
        m = tl.maximum(m, tl.max(lse, 0))
    m_safe = tl.where(m == float("-inf"), 0.0, m)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    den = tl.sum(tl.zeros([BLOCK_S], dtype=tl.float32), 0)
    for s0 in range(0, num_splits, BLOCK_S):
        s = s0 + offs_s
        ok = s < num_splits
        w = tl.exp(tl.load(PartLse + s * total_rows + row, mask=ok, other=float("-inf")) - m_safe)
        o = tl.load(PartO + (s.to(tl.int64) * total_rows + row)[:, None] * D + offs_d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        acc += tl.sum(w[:, None] * o, 0)
        den += tl.sum(w, 0)
    out = acc / tl.where(den > 0, den, 1.0)
    tl.store(Out + row.to(tl.int64) * D + offs_d, out.to(Out.dtype.element_ty))
