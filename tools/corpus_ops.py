"""Library kernels with a known character, each run once inside the NVTX range `corpus`, for the
labelled validation corpus (tests/fixtures/h200/corpus/). Run on a GPU under ncu, e.g.

    ncu --config-file off --clock-control none --cache-control all --nvtx --nvtx-include corpus/ \
        --set full -c 3 -f -o corpus/gemm python3 tools/corpus_ops.py gemm

Ops (sizes chosen so each kernel runs well past launch overhead; labels come from measurement):
gemm (cuBLAS bf16 8192^3), sdpa (flash attention bf16), add (1 GiB elementwise), copy (1 GiB),
softmax (rows of 4096 fp32), rowsum (reduction), embedding_bag (16 MiB table re-read from L2),
topk (one small row), tiny (10 tiny adds, or $ROOFLINE_TINY_LAUNCHES: a many-launch report for reader benchmarks).
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F


def make(name: str):
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    r = lambda *s, dt=torch.bfloat16: torch.randn(*s, device=dev, dtype=torch.float32, generator=g).to(dt)  # noqa: E731
    if name == "gemm":
        a, b = r(8192, 8192), r(8192, 8192)
        return lambda: a @ b
    if name == "sdpa":
        q, k, v = r(4, 32, 4096, 128), r(4, 32, 4096, 128), r(4, 32, 4096, 128)
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if name == "add":
        a, b = r(256 * 2**20), r(256 * 2**20)
        return lambda: a + b
    if name == "copy":
        a = r(512 * 2**20)
        out = torch.empty_like(a)
        return lambda: out.copy_(a)
    if name == "softmax":
        x = r(32768, 4096, dt=torch.float32)
        return lambda: torch.softmax(x, dim=-1)
    if name == "rowsum":
        x = r(65536, 4096, dt=torch.float32)
        return lambda: x.sum(dim=-1)
    if name == "embedding_bag":
        table = r(16384, 256, dt=torch.float32)  # 16 MiB: stays in the 60 MB L2
        idx = torch.randint(0, 16384, (8 * 2**20,), device=dev, generator=g)
        offsets = torch.arange(0, idx.numel(), 1024, device=dev)
        return lambda: F.embedding_bag(idx, table, offsets, mode="sum")
    if name == "topk":
        x = r(1, 4096, dt=torch.float32)
        return lambda: torch.topk(x, 8)
    if name == "tiny":
        a = r(4096)
        n = int(os.environ.get("ROOFLINE_TINY_LAUNCHES", "10"))
        return lambda: [a + 1 for _ in range(n)]
    raise SystemExit(f"unknown op {name!r}")


def main() -> int:
    name = sys.argv[1]
    fn = make(name)
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("corpus")
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"corpus op {name} ran on {torch.cuda.get_device_name()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
