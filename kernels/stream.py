"""Streaming kernels that measure ceilings: a pure DRAM read (each byte once, coalesced)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _read_kernel(X, Partial, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = pid.to(tl.int64) * BLOCK * ITERS
    for it in range(ITERS):
        offs = base + it * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(X + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(Partial + pid, tl.sum(acc, 0))


def stream_read(x: torch.Tensor, block: int = 4096, iters: int = 16) -> torch.Tensor:
    """Read every element of `x` once; returns per-program sums (so the reads are not elided)."""
    n = x.numel()
    grid = triton.cdiv(n, block * iters)
    partial = torch.empty(grid, dtype=torch.float32, device=x.device)
    _read_kernel[(grid,)](x, partial, n, BLOCK=block, ITERS=iters, num_warps=8)
    return partial
