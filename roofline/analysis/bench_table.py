"""Benchmark times against the floor: effective GB/s, % of measured bandwidth, gap, speedup."""

from __future__ import annotations

import pandas as pd

from kernels.spec import VerifyWorkload
from roofline.analysis.floor import workload_floor
from roofline.catalogue.gpus import Ceiling, GpuSpec

BASELINE = "triton_mla"
READ = "read"  # profiler.bench.READ: the bare read of a point's KV bytes


def row_workload(r) -> VerifyWorkload:
    """The workload of one bench row (its floor does not depend on the mask); a ragged batch's lengths are
    its `ctx_lens` (comma-joined), so the floor takes the batch's total bytes and FLOPs."""
    lens = ragged_lens(r)
    return VerifyWorkload(
        ctx_len=int(r.ctx_len),
        heads=int(r.heads),
        q_len=int(r.q_len),
        page_size=int(r.page_size),
        batch=len(lens) if lens else int(r.batch),
        ctx_lens=lens,
    )


def ragged_lens(r) -> tuple[int, ...] | None:
    """A bench row's per-request prefixes (its `ctx_lens` text), or None for a batch of equal requests (rows
    saved before ragged batches have no such column)."""
    text = r.get("ctx_lens") if hasattr(r, "get") else getattr(r, "ctx_lens", None)
    if not isinstance(text, str) or not text.strip():
        return None
    return tuple(int(c) for c in text.split(","))


def point_keys(table: pd.DataFrame) -> list[str]:
    """The columns that name one bench point: a kernel's row and the read of the same bytes share them."""
    keys = ["ctx_len", "page_size", "heads", "q_len", "batch"]
    return keys + [k for k in ("mask", "ctx_lens") if k in table]


def bench_table(times: pd.DataFrame, gpu: GpuSpec, read_gbps: float, matmul_tflops: float, source: str) -> pd.DataFrame:
    """Add kv_bytes, eff_gbps (KV bytes / time), pct_of_read_bw, tflops, pct_of_matmul,
    floor_ms and gap (from the ceilings measured in the same run), at_size_ms and gap_at_size
    (at_size_columns), speedup over triton_mla."""
    bw = Ceiling(read_gbps, "GB/s", "measured", source)
    peak = Ceiling(matmul_tflops, "TFLOP/s", "measured", source)
    out = times.copy()
    extra = []
    for _, r in out.iterrows():
        w = row_workload(r)
        f = workload_floor(w, gpu, bandwidth=bw, peak=peak)
        sec = r.median_ms * 1e-3
        extra.append(
            {
                "kv_bytes": f.kv_bytes,
                "eff_gbps": f.kv_bytes / sec / 1e9,
                "pct_of_read_bw": 100 * f.kv_bytes / sec / 1e9 / read_gbps,
                "tflops": f.flops / sec / 1e12,
                "pct_of_matmul": 100 * f.flops / sec / 1e12 / matmul_tflops,
                "floor_ms": f.floor_ms,
                "floor_bound": f.bound,
                "gap": r.median_ms / f.floor_ms,
            }
        )
    out = at_size_columns(pd.concat([out.reset_index(drop=True), pd.DataFrame(extra)], axis=1), gpu)
    is_read = (
        out.kernel == READ
    )  # a bare read does no attention FLOPs: its TFLOP/s would be the workload's, not its own
    out.loc[is_read, ["tflops", "pct_of_matmul"]] = float("nan")
    keys = point_keys(out)
    base = out[out.kernel == BASELINE].set_index(keys)["median_ms"]
    out["speedup_vs_triton_mla"] = [
        base.get(tuple(r[k] for k in keys), float("nan")) / r.median_ms for _, r in out.iterrows()
    ]
    read = out[out.kernel == READ].set_index(keys)["median_ms"]  # the bare read of the same bytes, same run
    out["x_read"] = [r.median_ms / read.get(tuple(r[k] for k in keys), float("nan")) for _, r in out.iterrows()]
    return out


def at_size_columns(table: pd.DataFrame, gpu: GpuSpec | None) -> pd.DataFrame:
    """The table with at_size_ms and gap_at_size: each row's bytes read at the GPU's measured read fit
    (GpuSpec.read_fit: fixed + bytes / rate), or the compute floor where that is longer; NaN without a fit."""
    fit = gpu.read_fit() if gpu is not None else None
    at = []
    for _, r in table.iterrows():
        if fit is None:
            at.append(float("nan"))
            continue
        w = row_workload(r)
        f = workload_floor(w, gpu, read_fit=fit)
        at.append(max(f.at_size_ms, r.floor_ms if f.bound == "compute" else 0.0))
    out = table.assign(at_size_ms=at)
    out["gap_at_size"] = out["median_ms"] / out["at_size_ms"]
    return out
