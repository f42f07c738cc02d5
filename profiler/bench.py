"""Time kernels on the GPU with CUDA events (triton.testing.do_bench: warm-up, L2 flushed before
each repeat, median), and measure this GPU's ceilings in the same run. Needs torch + a GPU."""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import pandas as pd
import torch
import triton
import triton.testing

from kernels.inputs import build_inputs
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload


@dataclass(frozen=True)
class MeasuredCeilings:
    device: str
    copy_gbps: float  # device-to-device copy, bytes read + written
    read_gbps: float  # a streaming read, each byte once
    matmul_tflops: float  # bf16 8192^3 through torch
    l2_read_gbps: float | None = None  # a 16 MiB buffer re-read from L2 (no flush between calls)


def median_ms(fn, warmup_ms: int = 25, rep_ms: int = 200) -> float:
    return float(triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def graph_replay_ms(fn, warmup_ms: int = 10, rep_ms: int = 60) -> float:
    """Median ms of one CUDA-graph replay of `fn`'s launches (no host launch cost); `fn` runs once
    first, outside the capture, so that it compiles there."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return median_ms(graph.replay, warmup_ms, rep_ms)


def measure_ceilings(gib: float = 4.0) -> MeasuredCeilings:
    """Copy and read a `gib` GiB buffer (many times L2), and a large bf16 matmul."""
    from kernels.stream import stream_read

    n = int(gib * 2 ** 30) // 2
    a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a))
    read_ms = median_ms(lambda: stream_read(a))
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    mm_ms = median_ms(lambda: x @ y)
    return MeasuredCeilings(device=torch.cuda.get_device_name(),
                            copy_gbps=2 * a.numel() * 2 / (copy_ms * 1e-3) / 1e9,
                            read_gbps=a.numel() * 2 / (read_ms * 1e-3) / 1e9,
                            matmul_tflops=2 * 8192 ** 3 / (mm_ms * 1e-3) / 1e12,
                            l2_read_gbps=measure_l2_read())


def measure_l2_read(calls: int = 20) -> float:
    """GB/s of the L2-resident re-read probe, timed with events over back-to-back calls (no flush)."""
    from kernels.probes import make_l2_reread

    run = make_l2_reread("cuda")
    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        run()
    end.record()
    torch.cuda.synchronize()
    return run.bytes_read * calls / (start.elapsed_time(end) * 1e-3) / 1e9


def _time_call(fn, inp, kwargs: dict, rep_ms: int = 200) -> float:
    fn(inp, **kwargs)  # compile outside the timing
    torch.cuda.synchronize()
    return median_ms(lambda: fn(inp, **kwargs), rep_ms=rep_ms)


def time_kernel(name: str, workload: VerifyWorkload, **kernel_kwargs) -> float:
    """Median milliseconds of one call of kernel `name` on fresh inputs for `workload`."""
    return _time_call(get_kernel(name).load(), build_inputs(workload, device="cuda"), kernel_kwargs)


def bench_grid(kernels: list[str], ctx_lens: list[int], page_sizes: list[int], heads: list[int],
               q_len: int = 9, batch: int = 1, progress=None) -> pd.DataFrame:
    """One row per kernel x ctx_len x page_size x heads: median_ms (NaN with `error` on failure)."""
    rows = []
    cases = list(itertools.product(heads, page_sizes, ctx_lens, kernels))
    for n, (h, ps, ctx, name) in enumerate(cases, 1):
        w = VerifyWorkload(ctx_len=ctx, heads=h, q_len=q_len, page_size=ps, batch=batch)
        row = {"kernel": name, "ctx_len": ctx, "page_size": ps, "heads": h, "q_len": q_len,
               "batch": batch, "median_ms": float("nan"), "error": ""}
        try:
            row["median_ms"] = time_kernel(name, w)
        except Exception as exc:  # keep going: one failing case must not lose the table
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        rows.append(row)
        if progress:
            progress(f"[{n}/{len(cases)}] {name} ctx={ctx} page={ps} heads={h}: "
                     + (f"{row['median_ms']:.4f} ms" if not row["error"] else row["error"]))
        torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def tune(name: str, workload: VerifyWorkload, space: dict[str, list], progress=None) -> pd.DataFrame:
    """Median ms of every combination of kernel keyword arguments in `space` (failures kept)."""
    fn = get_kernel(name).load()
    inp = build_inputs(workload, device="cuda")
    keys = list(space)
    rows = []
    for values in itertools.product(*(space[k] for k in keys)):
        kw = dict(zip(keys, values))
        try:
            ms = _time_call(fn, inp, kw, rep_ms=100)
        except Exception as exc:
            ms = float("nan")
            print(f"tune: {kw}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
        rows.append({**kw, "median_ms": ms})
        if progress:
            progress(f"tune {name} {workload.describe()} {kw}: {ms:.4f} ms")
    return pd.DataFrame(rows).sort_values("median_ms")
