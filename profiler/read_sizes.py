"""Time one streaming read of a buffer at several sizes (needs torch + a GPU), for `roofline calibrate`'s
fit of time = fixed + bytes / rate (roofline.analysis.scaling.read_fit): every kernel pays a fixed cost to ramp up,
which a single 4 GiB read hides."""

from __future__ import annotations

import torch

from kernels.stream import stream_read
from profiler.bench import graph_replay_ms

# 75 MB to 1.2 GB: the sizes of the committed H200 fit (docs/results/h200-stream-probe.json, sizes-1).
READ_SIZES = (75_497_472, 150_994_944, 301_989_888, 603_979_776, 1_207_959_552)


def read_times(sizes: tuple[int, ...] = READ_SIZES) -> list[tuple[int, float]]:
    """(bytes, median ms of one CUDA-graph replay of stream_read over that many bf16 bytes) per size."""
    out = []
    for nbytes in sizes:
        x = torch.randn(nbytes // 2, device="cuda", dtype=torch.bfloat16)
        out.append((x.numel() * 2, graph_replay_ms(lambda x=x: stream_read(x))))
        torch.cuda.empty_cache()
    return out
