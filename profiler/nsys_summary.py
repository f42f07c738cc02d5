"""The nsys timeline in a few tables and numbers: per kernel (launches, total / median / min / max ms),
per NVTX `step` range (step time, kernel time, idle gaps, launch API time), and the run's summary
(the medians per step, how busy the GPU was in the profiled range). profiler/nsys_reader.py reads the
launches and ranges from the sqlite export; this module only summarizes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from profiler.nvtx import RANGE


def busy_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """Length of the union of [start, end) intervals (kernels on several streams may overlap)."""
    order = np.argsort(starts)
    total, cur_s, cur_e = 0, None, None
    for s, e in zip(starts[order], ends[order]):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return int(total + (cur_e - cur_s if cur_e is not None else 0))


def overlaps(summed_ms: float | None, busy_ms: float | None) -> bool:
    """Whether launches whose own times sum to `summed_ms` overlap in time, where the GPU ran kernels for `busy_ms`
    (the union of their intervals): a programmatic dependent launch, or kernels on two streams."""
    return summed_ms is not None and busy_ms is not None and summed_ms > busy_ms * 1.001


def overlapping_launch_ms(summary: dict) -> float | None:
    """A timeline summary's per-step sum of the launches' own times where they overlap (timeline_summary's
    launch_ms_per_step, above its kernel_ms_per_step), else None."""
    summed = summary.get("launch_ms_per_step")
    return summed if overlaps(summed, summary.get("kernel_ms_per_step")) else None


def summarize_kernels(launches: pd.DataFrame) -> pd.DataFrame:
    """Per kernel (by its demangled name, as `nsys stats --report cuda_gpu_kern_sum`): launches and
    total / median / min / max time in ms, largest total first."""
    cols = ["kernel", "demangled_name", "launches", "total_ms", "median_ms", "min_ms", "max_ms", "share_pct"]
    if launches.empty:
        return pd.DataFrame(columns=cols)
    g = launches.groupby("demangled_name", sort=False)
    out = pd.DataFrame(
        {
            "kernel": g["kernel"].first(),
            "launches": g.size(),
            "total_ms": g["duration_ns"].sum() / 1e6,
            "median_ms": g["duration_ns"].median() / 1e6,
            "min_ms": g["duration_ns"].min() / 1e6,
            "max_ms": g["duration_ns"].max() / 1e6,
        }
    )
    out["share_pct"] = 100 * out["total_ms"] / out["total_ms"].sum()
    out = out.reset_index().sort_values("total_ms", ascending=False, kind="stable").reset_index(drop=True)
    return out[cols]


def summarize_steps(launches: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Per `step` range: step time (first kernel start to last kernel end of the kernels launched in it),
    kernel time, idle time between them, and the host time spent in their launch API calls."""
    rows = []
    for i, rng in steps.reset_index(drop=True).iterrows():
        mine = launches[launches["step"] == i]
        row = {
            "step": i,
            "range_start_ns": int(rng["start"]),
            "range_end_ns": int(rng["end"]),
            "range_ms": (rng["end"] - rng["start"]) / 1e6,
            "kernels": len(mine),
        }
        if len(mine):
            s, e = mine["start_ns"].to_numpy(), mine["end_ns"].to_numpy()
            span = int(e.max() - s.min())
            busy = busy_ns(s, e)
            gaps = s[1:] - np.maximum.accumulate(e)[:-1] if len(mine) > 1 else np.array([0])
            row.update(
                step_ms=span / 1e6,
                kernel_ms=mine["duration_ns"].sum() / 1e6,
                busy_ms=busy / 1e6,
                idle_ms=(span - busy) / 1e6,
                max_gap_ms=max(0, int(gaps.max())) / 1e6,
                launch_api_ms=mine["api_ns"].sum(min_count=1) / 1e6,
                first_kernel_start_ns=int(s.min()),
                last_kernel_end_ns=int(e.max()),
            )
        rows.append(row)
    cols = [
        "step",
        "kernels",
        "step_ms",
        "kernel_ms",
        "busy_ms",
        "idle_ms",
        "max_gap_ms",
        "launch_api_ms",
        "range_ms",
        "range_start_ns",
        "range_end_ns",
        "first_kernel_start_ns",
        "last_kernel_end_ns",
    ]
    return pd.DataFrame(rows, columns=cols)


def median_or_none(series: pd.Series) -> float | None:
    series = series.dropna()
    return float(series.median()) if len(series) else None


def timeline_summary(
    meta: dict, launches: pd.DataFrame, profiled: pd.DataFrame, outer: pd.DataFrame, steps: pd.DataFrame, name: Path
) -> dict:
    done = steps[steps["kernels"] > 0]
    step_ms, idle_ms = median_or_none(done["step_ms"]), median_or_none(done["idle_ms"])
    return {
        "source": str(name),
        "nsys_version": meta.get("EXPORT_PRODUCT_VERSION"),
        "schema": meta.get("EXPORT_SCHEMA_VERSION"),
        "gpu": next((d for d in launches["device"] if d), None),
        "launches": len(launches),
        "launches_in_range": len(profiled) if len(outer) else None,
        "range": RANGE if len(outer) else None,
        "range_ms": float((outer["end"] - outer["start"]).sum() / 1e6) if len(outer) else None,
        "kernels": int(profiled["demangled_name"].nunique()),
        "steps": len(steps),
        "steps_without_kernels": int((steps["kernels"] == 0).sum()),
        "kernels_per_step": median_or_none(done["kernels"]),
        "step_ms_median": step_ms,
        "step_ms_min": float(done["step_ms"].min()) if len(done) else None,
        "step_ms_max": float(done["step_ms"].max()) if len(done) else None,
        # the time a kernel ran (launches that overlap, as a programmatic dependent launch does, count once)
        "kernel_ms_per_step": median_or_none(done["busy_ms"]),
        "launch_ms_per_step": median_or_none(done["kernel_ms"]),  # the launches' own times summed
        "idle_ms_per_step": idle_ms,
        "idle_pct": 100 * idle_ms / step_ms if step_ms else None,
        "launch_api_ms_per_step": median_or_none(done["launch_api_ms"]),
        # host side: how long the program took per step (the NVTX range, launch to return), and how much
        # of the profiled range the GPU spent running kernels (low: the GPU waits for the host)
        "host_ms_per_step": median_or_none(steps["range_ms"]),
        "gpu_busy_pct_of_range": (
            100
            * busy_ns(profiled["start_ns"].to_numpy(), profiled["end_ns"].to_numpy())
            / float((outer["end"] - outer["start"]).sum())
            if len(outer) and len(profiled)
            else None
        ),
    }
