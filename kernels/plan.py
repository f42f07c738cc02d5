"""Launch shapes of the kernels, in plain Python (no torch), so models can reason about them."""

from __future__ import annotations


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def plan_splits(max_kv_len: int, batch: int, m_blocks: int, sm_count: int, block_n: int,
                programs_per_sm: float, min_split_len: int) -> tuple[int, int]:
    """(split_len, splits) for triton_mla_fast: about programs_per_sm x SMs programs in all,
    split_len a multiple of block_n and at least min_split_len."""
    target_splits = max(1, round(programs_per_sm * sm_count / (batch * m_blocks)))
    split_len = max(min_split_len, cdiv(max_kv_len, target_splits))
    split_len = cdiv(split_len, block_n) * block_n
    return split_len, cdiv(max_kv_len, split_len)


# Default launch parameters, shared by the kernels and by roofline's models of them.
EXTEND_BLOCK_M = 32  # triton_mla: query rows per program (SGLang's extend kernel on sm_90)
DECODE_BLOCK_H = 16  # triton_mla_decode: heads per program
DECODE_KV_SPLITS = 8  # triton_mla_decode: splits per row (SGLang's default)
FAST_DEFAULTS = dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0)
FAST_MIN_SPLIT_LEN = 256
