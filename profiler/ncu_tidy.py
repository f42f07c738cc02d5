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
TIDY.update({
    "tensor_bf16_ops": ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1.0),
    "tensor_ops_per_cycle_peak": ("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained", 1.0),
    "sm_cycles_per_second": ("sm__cycles_elapsed.avg.per_second", 1.0),
    "fp32_fadd": ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1.0),
    "fp32_fmul": ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1.0),
    "fp32_ffma": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1.0),
    "ffma_per_cycle_peak": ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", 1.0),
    "l1_bytes": ("l1tex__t_bytes.sum", 1.0),
    "l1_bytes_per_cycle_peak": ("l1tex__t_bytes.sum.peak_sustained", 1.0),
    "l1_cycles_per_second": ("l1tex__cycles_elapsed.avg.per_second", 1.0),
    "l1_hit_rate_pct": ("l1tex__t_sector_hit_rate.pct", 1.0),
    "l2_bytes": ("lts__t_bytes.sum", 1.0),
    "l2_bytes_per_cycle_peak": ("lts__t_bytes.sum.peak_sustained", 1.0),
    "l2_cycles_per_second": ("lts__cycles_elapsed.avg.per_second", 1.0),
    "dram_bytes": ("dram__bytes.sum", 1.0),
    "tensor_pipe_pct": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", 1.0),
    "fma_pipe_pct": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", 1.0),
    "occupancy_limit_registers": ("launch__occupancy_limit_registers", 1.0),
    "occupancy_limit_shared_mem": ("launch__occupancy_limit_shared_mem", 1.0),
    "occupancy_limit_warps": ("launch__occupancy_limit_warps", 1.0),
    "occupancy_limit_blocks": ("launch__occupancy_limit_blocks", 1.0),
})
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
    _derive_hierarchy(out)
    out.attrs["missing_metrics"] = missing
    out.attrs["rules"] = raw.attrs.get("rules", {})
    out.attrs["source"] = raw.attrs.get("source")
    return out


def _derive_hierarchy(out: pd.DataFrame) -> None:
    """FLOPs and per-level peaks from the raw counters (the report's own ceilings)."""
    out["tensor_flops"] = out["tensor_bf16_ops"]  # bf16 -> fp32 MMA ops (2 per multiply-add)
    out["tensor_peak_tflops"] = out["tensor_ops_per_cycle_peak"] * out["sm_cycles_per_second"] / 1e12
    out["fp32_flops"] = out["fp32_fadd"] + out["fp32_fmul"] + 2 * out["fp32_ffma"]
    out["fp32_peak_tflops"] = 2 * out["ffma_per_cycle_peak"] * out["sm_cycles_per_second"] / 1e12
    out["l1_peak_gbps"] = out["l1_bytes_per_cycle_peak"] * out["l1_cycles_per_second"] / 1e9
    out["l2_peak_gbps"] = out["l2_bytes_per_cycle_peak"] * out["l2_cycles_per_second"] / 1e9
    out["dram_bytes"] = out["dram_bytes"].fillna(out["dram_bytes_read"] + out["dram_bytes_write"])
