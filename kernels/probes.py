"""Probe kernels whose bound is known by construction: the validation suite for the verdicts.

- stream_copy:   copy 1 GiB, each byte read and written once         -> bandwidth, DRAM roof
- matmul:        8192^3 bf16 torch matmul (cuBLAS)                    -> compute, tensor pipe
- pointer_chase: each warp follows one dependent random chain         -> latency, long_scoreboard
- small_grid:    4 programs stream 256 MiB                            -> latency, small grid
- l2_reread:     a 16 MiB buffer re-read from L2 (cache_modifier .cg) -> bandwidth, L2 roof
Each `make_<name>(device)` returns a zero-argument callable that launches the probe once.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import triton
import triton.language as tl

from kernels.launch_spec import device_facts


@triton.jit
def _copy_kernel(Src, Dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Dst + offs, tl.load(Src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _chase_kernel(Next, Out, steps, n, LANES: tl.constexpr):
    # every lane of the warp follows the same chain: one sector per step, each step waits on the last
    idx = (tl.program_id(0) * 7919 % n) + tl.zeros([LANES], dtype=tl.int32)
    for _ in range(steps):
        idx = tl.load(Next + idx)
    tl.store(Out + tl.program_id(0) * LANES + tl.arange(0, LANES), idx)


@triton.jit
def _read_chunks_kernel(X, Out, chunk, repeats, BLOCK: tl.constexpr, CG: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * chunk
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(repeats):
        for start in range(0, chunk, BLOCK):
            offs = base + start + tl.arange(0, BLOCK)
            if CG:
                acc += tl.load(X + offs, cache_modifier=".cg").to(tl.float32)
            else:
                acc += tl.load(X + offs).to(tl.float32)
    tl.store(Out + tl.program_id(0), tl.sum(acc, 0))


def make_stream_copy(device: str = "cuda") -> Callable[[], None]:
    n = 2 ** 29  # 1 GiB of bf16
    src = torch.randn(n, device=device, dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    return lambda: _copy_kernel[(triton.cdiv(n, 4096),)](src, dst, n, BLOCK=4096, num_warps=8)


def make_matmul(device: str = "cuda") -> Callable[[], None]:
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    return lambda: a @ b


def make_pointer_chase(device: str = "cuda", n: int = 2 ** 26, steps: int = 2000) -> Callable[[], None]:
    perm = torch.randperm(n, device=device, dtype=torch.int64)
    nxt = torch.empty(n, device=device, dtype=torch.int32)
    nxt[perm] = torch.roll(perm, 1).to(torch.int32)  # one random cycle through 256 MiB
    sms = device_facts(device)[1]
    programs = 2 * 32 * sms  # two waves of one-warp programs: not a small grid
    out = torch.empty(programs * 32, device=device, dtype=torch.int32)
    return lambda: _chase_kernel[(programs,)](nxt, out, steps, n, LANES=32, num_warps=1)


def make_small_grid(device: str = "cuda") -> Callable[[], None]:
    programs, chunk = 4, 2 ** 25  # 4 x 32 Mi bf16 = 256 MiB
    x = torch.randn(programs * chunk, device=device, dtype=torch.bfloat16)
    out = torch.empty(programs, device=device, dtype=torch.float32)
    return lambda: _read_chunks_kernel[(programs,)](x, out, chunk, 1, BLOCK=2048, CG=False, num_warps=8)


def make_l2_reread(device: str = "cuda", repeats: int = 200) -> Callable[[], None]:
    """The callable carries `bytes_read` (bytes served per call), for `roofline calibrate`."""
    sms = device_facts(device)[1]
    programs = 4 * sms
    chunk = (2 ** 23) // programs // 2048 * 2048  # ~16 MiB of bf16 in all: fits in L2, not in L1
    x = torch.randn(programs * chunk, device=device, dtype=torch.bfloat16)
    out = torch.empty(programs, device=device, dtype=torch.float32)

    def run():
        _read_chunks_kernel[(programs,)](x, out, chunk, repeats, BLOCK=2048, CG=True, num_warps=8)

    run.bytes_read = x.numel() * x.element_size() * repeats
    return run


PROBES: dict[str, Callable[..., Callable[[], None]]] = {
    "stream_copy": make_stream_copy, "matmul": make_matmul, "pointer_chase": make_pointer_chase,
    "small_grid": make_small_grid, "l2_reread": make_l2_reread,
}
