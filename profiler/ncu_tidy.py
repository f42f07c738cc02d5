"""Name ncu's raw metrics in the field's words, in fixed units (ms, bytes, GB/s, %)."""

from __future__ import annotations

import pandas as pd

from profiler.ncu import STALL_REASONS, stall_metric

# ncu_report gives values in base units; these are the unit strings it was seen to use
# (ncu 2025.3.1: '', '%', 'ns', 'byte', 'byte/s', 'hz', 'byte/cycle', ...) plus prefixed forms.
_SCALE = {"": 1.0, "%": 1.0, "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_SCALE.update({u: 1.0 for u in ("byte", "cycle", "sector", "sectors", "inst", "warp", "block", "thread",
                                 "request", "register", "SM", "pass", "sample", "cluster", "branches")})
_SCALE.update({f"{p}byte": f for p, f in (("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))})
_SCALE.update({"s": 1.0, "second": 1.0, "ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6,
               "ns": 1e-9, "nsecond": 1e-9})


class UnitError(ValueError):
    pass


def unit_scale(unit: str) -> float:
    """Factor from `unit` to its base (byte, second, cycle); 'X/Y' divides. Unknown unit: error."""
    unit = (unit or "").strip()
    for key in (unit, unit.lower()):
        if key in _SCALE:
            return _SCALE[key]
    if "/" in unit:
        num, den = unit.split("/", 1)
        return unit_scale(num) / unit_scale(den)
    raise UnitError(f"unknown unit {unit!r}")


# tidy column -> (ncu metric, target scale: base units are divided by this)
TIDY = {
    "duration_ms": ("gpu__time_duration.sum", 1e-3),
    "sm_throughput_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", 1.0),
    "memory_throughput_pct": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 1.0),
    "dram_throughput_pct": ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1.0),
    "dram_bytes_read": ("dram__bytes_read.sum", 1.0),
    "dram_bytes_write": ("dram__bytes_write.sum", 1.0),
    "dram_gbps": ("dram__bytes.sum.per_second", 1e9),
    "dram_bytes_per_cycle_peak": ("dram__bytes.sum.peak_sustained", 1.0),
    "dram_cycles_per_second": ("dram__cycles_elapsed.avg.per_second", 1.0),
    "l2_hit_rate_pct": ("lts__t_sector_hit_rate.pct", 1.0),
    "achieved_occupancy_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active", 1.0),
    "theoretical_occupancy_pct": ("sm__maximum_warps_per_active_cycle_pct", 1.0),
    "waves_per_sm": ("launch__waves_per_multiprocessor", 1.0),
    "grid_size": ("launch__grid_size", 1.0),
    "block_size": ("launch__block_size", 1.0),
    "registers_per_thread": ("launch__registers_per_thread", 1.0),
    "shared_mem_per_block": ("launch__shared_mem_per_block", 1.0),
    "sm_count": ("device__attribute_multiprocessor_count", 1.0),
}
TIDY.update({f"stall_{r}": (stall_metric(r), 1.0) for r in STALL_REASONS})


def tidy_launches(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per launch with the TIDY columns (NaN where the report lacks a metric)."""
    units = raw.attrs.get("units", {})
    out = pd.DataFrame({"launch": raw["launch"], "kernel": raw["kernel"]})
    out["device"] = raw["device__attribute_display_name"] if "device__attribute_display_name" in raw else None
    missing = []
    for column, (metric, target) in TIDY.items():
        if metric not in raw:
            out[column] = float("nan")
            missing.append(metric)
            continue
        try:
            scale = unit_scale(units.get(metric, "")) / target
        except UnitError as exc:
            raise UnitError(f"{metric}: {exc}") from None
        out[column] = pd.to_numeric(raw[metric], errors="coerce") * scale
    if out["dram_gbps"].isna().all() and not out["duration_ms"].isna().all():
        total = out["dram_bytes_read"] + out["dram_bytes_write"]
        out["dram_gbps"] = total / (out["duration_ms"] * 1e-3) / 1e9
    out["dram_peak_gbps"] = out["dram_bytes_per_cycle_peak"] * out["dram_cycles_per_second"] / 1e9
    out.attrs["missing_metrics"] = missing
    out.attrs["rules"] = raw.attrs.get("rules", {})
    out.attrs["source"] = raw.attrs.get("source")
    return out
