"""The online-softmax tile update every attention kernel here shares (Triton device function)."""

import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # host side: scores are scaled into log2 units (exp2 is the fast path)
LN2 = tl.constexpr(0.6931471805599453)  # kernel side: log2 -> natural log (globals in kernels must be constexpr)


@triton.jit
def online_softmax_update(qk, m_i, l_i, acc, v, NO_PV: tl.constexpr = False):
    """Fold one tile into the running (max, sum, acc).

    qk: [M, N] scores already scaled by sm_scale * LOG2E, masked entries -inf; v: [N, D].
    A row with nothing visible yet keeps m = -inf and contributes nothing (no NaN).
    NO_PV (a removal experiment, kernels/cuts.py): acc is only rescaled, no P V.
    """
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.math.exp2(m_i - m_safe)
    p = tl.math.exp2(qk - m_safe[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    if NO_PV:
        acc = acc * alpha[:, None]
    else:
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, l_i, acc
