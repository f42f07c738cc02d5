"""How a kernel's time grows with the KV bytes: time = fixed + bytes / rate, fitted over context lengths.

The floor has no fixed part; a kernel does (launch and ramp, query prologue, partials, merge). The fit
splits a benchmark's times into the two, so a gap to the floor can be read as "the per-byte rate is
low" or "the fixed part is large at this size".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.catalogue.gpus import ReadFit

MIN_POINTS = 3  # distinct context lengths a fit needs
FIT_TOL = 0.05  # the shortest contexts are dropped (down to MIN_POINTS) until every point is this close to the line
KEYS = ["kernel", "page_size", "heads", "q_len", "batch"]


@dataclass(frozen=True)
class ScalingFit:
    kernel: str
    page_size: int
    heads: int
    q_len: int
    batch: int
    points: int  # context lengths fitted: the longest ones where a line fits (FIT_TOL)
    min_ctx_len: int
    max_ctx_len: int
    fixed_us: float  # the line's time at zero KV bytes
    rate_gbps: float | None  # KV bytes per second the time grows at; None where it does not grow
    pct_of_read_bw: float | None
    rate_tflops: float | None  # the same growth in FLOP/s (FLOPs per KV byte are fixed for a kernel's rows)
    pct_of_matmul: float | None
    fixed_share: float  # fixed_us over the time at the longest context
    max_residual_pct: float  # the worst point's distance from the line, % of its time
    note: str = ""  # why the rate says little: the time does not grow, or grows faster than DRAM allows


def line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(slope, intercept, worst relative residual) of a least-squares line."""
    slope, intercept = np.polyfit(x, y, 1)
    return slope, intercept, float((np.abs(y - (intercept + slope * x)) / y).max())


def scaling_fits(table: pd.DataFrame, read_gbps: float, matmul_tflops: float) -> list[ScalingFit]:
    """One fit per kernel x page size x heads x q_len x batch with MIN_POINTS context lengths or more
    (rows with an error left out). Short contexts often sit off the line (host-bound calls, another
    split plan), so they are dropped while the line misses a point by more than FIT_TOL, keeping at
    least MIN_POINTS. `table` is bench_table's: median_ms, kv_bytes, tflops, eff_gbps. Ragged batches (rows
    with `ctx_lens`) are left out: their lengths are not one context length to fit over."""
    ok = table
    if "error" in ok.columns:
        ok = ok[ok["error"].fillna("").astype(str) == ""]
    if "ctx_lens" in ok.columns:
        ok = ok[ok["ctx_lens"].fillna("").astype(str) == ""]
    fits = []
    for key, g in ok.groupby(KEYS, sort=False):
        g = g.drop_duplicates("ctx_len").sort_values("ctx_len")
        if len(g) < MIN_POINTS:
            continue
        slope, intercept, worst = line_fit(g["kv_bytes"].to_numpy(float), g["median_ms"].to_numpy(float) * 1e-3)
        while worst > FIT_TOL and len(g) > MIN_POINTS:
            g = g.iloc[1:]
            slope, intercept, worst = line_fit(g["kv_bytes"].to_numpy(float), g["median_ms"].to_numpy(float) * 1e-3)
        flop_per_byte = float((g["tflops"] * 1e12 / (g["eff_gbps"] * 1e9)).iloc[-1])
        rate = 1 / slope / 1e9 if slope > 0 else None
        if rate is None:
            note = "the time does not grow with the bytes here: launch- or host-bound"
        elif rate > read_gbps or rate * flop_per_byte / 1e3 > matmul_tflops:
            note = (
                "the time grows by less than the ceilings allow for the bytes and FLOPs added: the shorter "
                "contexts are launch- or host-bound (or L2-resident)"
            )
        elif intercept < 0:
            note = "the line's fixed part is negative: the time grows faster than the bytes (the rate falls at longer contexts)"
        else:
            note = ""
        fits.append(
            ScalingFit(
                *key,
                points=len(g),
                min_ctx_len=int(g["ctx_len"].iloc[0]),
                max_ctx_len=int(g["ctx_len"].iloc[-1]),
                fixed_us=intercept * 1e6,
                rate_gbps=rate,
                pct_of_read_bw=100 * rate / read_gbps if rate else None,
                rate_tflops=rate * flop_per_byte / 1e3 if rate else None,
                pct_of_matmul=100 * rate * flop_per_byte / 1e3 / matmul_tflops if rate else None,
                fixed_share=intercept * 1e3 / float(g["median_ms"].iloc[-1]),
                max_residual_pct=100 * worst,
                note=note,
            )
        )
    return fits


def read_fit(points: list[tuple[int, float]], source: str) -> ReadFit:
    """time = fixed + bytes / rate over (bytes, ms) points of one reader (at least MIN_POINTS sizes);
    ValueError when there are fewer, the time does not grow with the bytes or the fixed part is not positive."""
    if len({b for b, _ in points}) < MIN_POINTS:
        raise ValueError(f"a read fit needs at least {MIN_POINTS} sizes, got {len(points)}")
    x = np.array([b for b, _ in points], float)
    y = np.array([ms * 1e-3 for _, ms in points], float)
    slope, intercept, worst = line_fit(x, y)
    if slope <= 0:
        raise ValueError("the read time does not grow with the bytes: no rate to fit")
    if intercept <= 0:  # the measured file refuses it too (roofline/catalogue/gpus.py): no fixed cost to add
        raise ValueError(
            f"the read fit's fixed part is {intercept * 1e6:.2f} µs, not positive: the time grows faster than the "
            "bytes over these sizes (measure again on an idle GPU)"
        )
    return ReadFit(
        fixed_us=float(intercept * 1e6),
        gbps=float(1 / slope / 1e9),
        min_bytes=int(x.min()),
        max_bytes=int(x.max()),
        source=f"{source}; worst point {100 * worst:.1f}% off the line",
    )
