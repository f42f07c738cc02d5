"""Name ncu's raw metrics in the field's words, in fixed units (ms, bytes, GB/s, %)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from profiler.launch_table import LaunchTable
from profiler.metrics import PCSAMP_COUNT, STALL_REASONS, alternates, pcsamp_metric, stall_metric

if TYPE_CHECKING:
    import pandas as pd

# ncu_report gives values in base units; these are the unit strings it was seen to use
# (ncu 2025.3.1: '', '%', 'ns', 'byte', 'byte/s', 'hz', 'byte/cycle', ...) plus prefixed forms.
_SCALE = {"": 1.0, "%": 1.0, "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_SCALE.update(
    {
        u: 1.0
        for u in (
            "byte",
            "cycle",
            "sector",
            "sectors",
            "inst",
            "warp",
            "block",
            "thread",
            "request",
            "register",
            "SM",
            "pass",
            "sample",
            "cluster",
            "branches",
        )
    }
)
_SCALE.update({f"{p}byte": f for p, f in (("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))})
_SCALE.update(
    {"s": 1.0, "second": 1.0, "ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6, "ns": 1e-9, "nsecond": 1e-9}
)


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
    "max_warps_per_sm": ("device__attribute_max_warps_per_multiprocessor", 1.0),
}
TIDY.update(
    {
        "tensor_bf16_ops": ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1.0),
        "tensor_ops_per_cycle_peak": (
            "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
            1.0,
        ),
        # mma.sync's own peak (held by --set full reports): what that path reaches (roofline/analysis/mma_path.py)
        "tensor_sync_ops_per_cycle_peak": (
            "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
            1.0,
        ),
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
        # load imbalance: cycles with a warp in flight on the average, busiest and idlest SM
        "sm_busy_cycles_avg": ("sm__cycles_active.avg", 1.0),
        "sm_busy_cycles_max": ("sm__cycles_active.max", 1.0),
        "sm_busy_cycles_min": ("sm__cycles_active.min", 1.0),
        # the grid's shape (ncu records it for every launch): which schedule a kernel launched
        "grid_x": ("launch__grid_dim_x", 1.0),
        "grid_y": ("launch__grid_dim_y", 1.0),
        "grid_z": ("launch__grid_dim_z", 1.0),
        # the tensor pipe's instructions by MMA path: mma.sync (HMMA) and warpgroup MMA (HGMMA; tcgen05 on sm_100)
        "mma_sync_inst": ("sm__inst_executed_pipe_tensor_op_hmma.sum", 1.0),
        "mma_async_inst": ("sm__inst_executed_pipe_tensor_op_gmma.sum", 1.0),
    }
)
TIDY.update({f"stall_{r}": (stall_metric(r), 1.0) for r in STALL_REASONS})
# Read where present, never asked for: a report's SASS names the MMA path where these counters are absent.
SASS_STANDS_IN = frozenset({"mma_sync_inst", "mma_async_inst"})
# Read where present, never named missing: launch attributes a CSV export may leave out (grid_size is enough there).
GRID_DIMS = frozenset({"grid_x", "grid_y", "grid_z"})
# Read where present, never named missing: no verdict needs them. The L1 level is judged by its throughput (the
# breakdown units, bytes over its peak), not its hit rate; DRAM's read/write split only adds up to dram_bytes,
# which the presets collect whole (dram__bytes.sum): named missing only when the total is absent too.
NOT_NEEDED = frozenset({"l1_hit_rate_pct", "tensor_sync_ops_per_cycle_peak"})
COVERED_BY = {"dram_bytes_read": "dram_bytes", "dram_bytes_write": "dram_bytes"}

# Fallbacks for `--set full`, which holds sector counts and per-cycle rates, not the byte and
# instruction totals above: bytes = sectors x 32, totals = sum.per_cycle_elapsed x cycles.
SECTOR_BYTES = 32
FALLBACKS = {
    "l1_sectors": ("l1tex__t_sectors.sum", 1.0),
    "l2_sectors": ("lts__t_sectors.sum", 1.0),
    "l2_sectors_per_cycle_peak_per_slice": ("lts__t_sectors.avg.peak_sustained", 1.0),
    "l2_cycles_sum": ("lts__cycles_elapsed.sum", 1.0),
    "l2_cycles_avg": ("lts__cycles_elapsed.avg", 1.0),
    "dram_sectors_read": ("dram__sectors_read.sum", 1.0),
    "dram_sectors_write": ("dram__sectors_write.sum", 1.0),
    "smsp_cycles_avg": ("smsp__cycles_elapsed.avg", 1.0),
    "fp32_fadd_per_cycle": ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", 1.0),
    "fp32_fmul_per_cycle": ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", 1.0),
    "fp32_ffma_per_cycle": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", 1.0),
}
TIDY.update(FALLBACKS)
# L1 tag-stage sectors by pipe, memory space and op: their sum is l1tex__t_sectors.sum.
L1_SECTOR_PARTS = tuple(
    f"l1tex__t_sectors_pipe_{part}.sum"
    for part in (
        "lsu_mem_global_op_ld",
        "lsu_mem_global_op_st",
        "lsu_mem_global_op_atom",
        "lsu_mem_global_op_red",
        "lsu_mem_local_op_ld",
        "lsu_mem_local_op_st",
        "lsu_mem_dshared_op_ld",
        "lsu_mem_dshared_op_st",
        "lsu_mem_dshared_op_atom",
        "lsu_mem_dshared_op_redas",
        "tex_mem_texture",
        "tex_mem_surface_op_ld",
        "tex_mem_surface_op_st",
        "tex_mem_surface_op_atom",
        "tex_mem_surface_op_red",
    )
)

# ncu's GPU Throughput Breakdown (SpeedOfLight section; the report lists them under
# `breakdown:sm__throughput...` and `breakdown:gpu__compute_memory_throughput...`): SM throughput
# and memory throughput are each the largest of these, every one in % of peak over elapsed cycles.
_PCT = ".avg.pct_of_peak_sustained_elapsed"
SM_UNITS = {  # tidy column -> (unit, ncu metric)
    "tensor_pipe_pct": ("tensor pipe", "sm__pipe_tensor_cycles_active" + _PCT),
    "tensor_any_pipe_pct": (
        "tensor pipe",
        "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active" + _PCT,
    ),
    "tensor_dmma_pipe_pct": ("FP64 tensor pipe", "sm__pipe_tensor_op_dmma_cycles_active" + _PCT),
    "fma_pipe_pct": ("FMA pipe (FP32)", "sm__pipe_fma_cycles_active" + _PCT),
    "fmaheavy_pipe_pct": ("FMA-heavy pipe (FP32, IMAD)", "sm__pipe_fmaheavy_cycles_active" + _PCT),
    "alu_pipe_pct": ("ALU pipe (integer, logic, compare)", "sm__pipe_alu_cycles_active" + _PCT),
    "fp64_pipe_pct": ("FP64 pipe", "sm__pipe_fp64_cycles_active" + _PCT),
    "shared_pipe_pct": ("shared pipe (FP16 and tensor)", "sm__pipe_shared_cycles_active" + _PCT),
    "tma_pipe_pct": ("TMA unit", "sm__pipe_tma_cycles_active" + _PCT),
    "adu_pipe_pct": ("ADU pipe (address, branch targets)", "sm__inst_executed_pipe_adu" + _PCT),
    "cbu_pipe_pct": ("CBU pipe (branches, barriers)", "sm__inst_executed_pipe_cbu_pred_on_any" + _PCT),
    "lsu_pipe_pct": ("LSU pipe (load/store instructions)", "sm__inst_executed_pipe_lsu" + _PCT),
    "tex_pipe_pct": ("TEX pipe", "sm__inst_executed_pipe_tex" + _PCT),
    "uniform_pipe_pct": ("uniform pipe", "sm__inst_executed_pipe_uniform" + _PCT),
    "xu_pipe_pct": ("XU pipe (exp, rsqrt, conversions)", "sm__inst_executed_pipe_xu" + _PCT),
    "ipa_pipe_pct": ("IPA pipe", "sm__inst_executed_pipe_ipa" + _PCT),
    "issue_active_pct": ("issue slots", "sm__issue_active" + _PCT),
    "inst_executed_pct": ("issue slots", "sm__inst_executed" + _PCT),
    "mio_inst_issued_pct": ("MIO queue (shared memory, special functions)", "sm__mio_inst_issued" + _PCT),
    "mio2rf_writeback_pct": ("MIO queue (shared memory, special functions)", "sm__mio2rf_writeback_active" + _PCT),
    "mio_pq_read_pct": ("MIO queue (shared memory, special functions)", "sm__mio_pq_read_cycles_active" + _PCT),
    "mio_pq_write_pct": ("MIO queue (shared memory, special functions)", "sm__mio_pq_write_cycles_active" + _PCT),
    "idc_pct": ("indexed constant cache", "idc__request_cycles_active" + _PCT),
    "sm_inst_internal_pct": ("SM instruction internal", "sm__instruction_throughput_internal_activity" + _PCT),
    "sm_mem_internal_pct": ("SM memory internal", "sm__memory_throughput_internal_activity" + _PCT),
}
_MEMORY_UNITS_BY_LEVEL = {  # level -> {tidy column: ncu metric}, each in % of peak over elapsed cycles
    "L1/shared": {
        "l1_lsu_wavefronts_pct": "l1tex__data_pipe_lsu_wavefronts",
        "l1_tex_wavefronts_pct": "l1tex__data_pipe_tex_wavefronts",
        "l1_bank_reads_pct": "l1tex__data_bank_reads",
        "l1_bank_writes_pct": "l1tex__data_bank_writes",
        "l1_f_wavefronts_pct": "l1tex__f_wavefronts",
        "l1_lsu_writeback_pct": "l1tex__lsu_writeback_active",
        "l1_tex_writeback_pct": "l1tex__tex_writeback_active",
        "l1_lsuin_requests_pct": "l1tex__lsuin_requests",
        "l1_texin_pct": "l1tex__texin_sm2tex_req_cycles_active",
        "l1_tmain_pct": "l1tex__tmain_requests",
        "l1_to_xbar_pct": "l1tex__m_l1tex2xbar_req_cycles_active",
        "xbar_to_l1_pct": "l1tex__m_xbar2l1tex_read_sectors",
    },
    "L2": {
        "l2_t_sectors_pct": "lts__t_sectors",
        "l2_t_tag_requests_pct": "lts__t_tag_requests",
        "l2_d_sectors_pct": "lts__d_sectors",
        "l2_d_fill_device_pct": "lts__d_sectors_fill_device",
        "l2_d_fill_sysmem_pct": "lts__d_sectors_fill_sysmem",
        "l2_d_atomic_pct": "lts__d_atomic_input_cycles_active",
        "l2_xbar_in_pct": "lts__xbar2lts_cycles_active",
        "l2_xbar_out_pct": "lts__lts2xbar_cycles_active",
    },
    "DRAM": {
        "dram_cycles_active_pct": "dram__cycles_active",
        "dram_sectors_pct": "fbpa__dram_sectors",
    },
}
MEMORY_UNITS = {
    col: (level, metric + _PCT)  # tidy column -> (level, ncu metric)
    for level, units in _MEMORY_UNITS_BY_LEVEL.items()
    for col, metric in units.items()
}
TIDY.update({col: (metric, 1.0) for col, (_, metric) in {**SM_UNITS, **MEMORY_UNITS}.items()})


# DRAM% under its other name (`dram__throughput`, as some ncu versions' SpeedOfLight and user CSVs
# carry it), read where `gpu__dram_throughput` is absent.
DRAM_PCT_ALIAS = "dram__throughput.avg.pct_of_peak_sustained_elapsed"


def raw_metrics() -> list[str]:
    """Every raw ncu metric tidy_launches reads: a reader may skip the rest of a report."""
    names = [
        "device__attribute_display_name",
        DRAM_PCT_ALIAS,
        *(a for m, _ in TIDY.values() for a in alternates(m)),
        *L1_SECTOR_PARTS,
        PCSAMP_COUNT,
        pcsamp_metric("selected"),
        *(pcsamp_metric(r) for r in STALL_REASONS),
    ]
    return list(dict.fromkeys(names))


def tidy_launches(table: LaunchTable) -> LaunchTable:
    """One row per launch with the TIDY columns (NaN where the report lacks a metric); the raw
    table's source, rules, notes and cut carried over, `missing_metrics` filled."""
    import numpy as np  # lazy, not at the top: the metric names above are read before pandas loads
    import pandas as pd  # lazy

    raw, units = table.frame, table.units
    columns = {
        "launch": raw["launch"],
        "kernel": raw["kernel"],
        "mangled_name": raw["mangled_name"] if "mangled_name" in raw else raw["kernel"],
        "device": raw["device__attribute_display_name"] if "device__attribute_display_name" in raw else None,
    }
    missing = []
    nan = np.full(len(raw), np.nan)
    for column, (name, target) in TIDY.items():
        # a chip may name the metric differently (profiler/metrics.py CHIP_NAMES): read either
        metric = next((m for m in alternates(name) if m in raw), None)
        if metric is None:
            columns[column] = nan
            missing.append((column, name))
            continue
        try:
            scale = unit_scale(units.get(metric, "")) / target
        except UnitError as exc:
            raise UnitError(f"{metric}: {exc}") from None
        # plain arrays: one DataFrame built at once is much faster than ~200 aligned Series
        columns[column] = pd.to_numeric(raw[metric], errors="coerce").to_numpy(dtype=float, na_value=np.nan) * scale
    out = pd.DataFrame(
        {k: (v.to_numpy() if isinstance(v, pd.Series) else v) for k, v in columns.items()}, index=raw.index
    )
    rw_bytes = out["dram_bytes_read"].notna()  # before sector counts fill in: bytes the report names as bytes
    _derive_from_sectors(out, raw)
    _derive_verdict_inputs(out, raw)
    _derive_hierarchy(out)
    _dram_bytes(out, rw_bytes)
    out = out.copy()  # one block again after the derived columns
    # DRAM GB/s from bytes and duration on any launch whose report lacks the rate metric
    out["dram_gbps_from_rate"] = out["dram_gbps"].notna().astype(float).where(out["dram_gbps"].notna())
    out["dram_gbps"] = out["dram_gbps"].fillna(out["dram_bytes"] / (out["duration_ms"] * 1e-3) / 1e9)
    out["dram_peak_gbps"] = out["dram_bytes_per_cycle_peak"] * out["dram_cycles_per_second"] / 1e9
    # absent and not derived from other counters (fallback inputs are only worth naming when used)
    absent = [
        m
        for c, m in missing
        if c not in FALLBACKS
        and c not in DERIVABLE
        and c not in SASS_STANDS_IN | GRID_DIMS
        and c not in NOT_NEEDED
        and out[c].isna().all()
        and not (c in COVERED_BY and out[COVERED_BY[c]].notna().any())
    ]
    return dataclasses.replace(table, frame=out, units={}, missing_metrics=absent)


def _derive_from_sectors(out: pd.DataFrame, raw: pd.DataFrame) -> None:
    """Fill byte and FLOP totals that `--set full` reports hold only as sectors or per-cycle rates."""
    import pandas as pd  # lazy

    parts = [c for c in L1_SECTOR_PARTS if c in raw]
    if parts:  # absent parts (older ncu, other chips) count as no traffic through them
        summed = sum(pd.to_numeric(raw[c], errors="coerce").fillna(0.0) for c in parts)
        out["l1_sectors"] = out["l1_sectors"].fillna(summed)
    out["l1_bytes"] = out["l1_bytes"].fillna(out["l1_sectors"] * SECTOR_BYTES)
    out["l2_bytes"] = out["l2_bytes"].fillna(out["l2_sectors"] * SECTOR_BYTES)
    slices = out["l2_cycles_sum"] / out["l2_cycles_avg"]  # L2 slices: each counts its own cycles
    out["l2_bytes_per_cycle_peak"] = out["l2_bytes_per_cycle_peak"].fillna(
        out["l2_sectors_per_cycle_peak_per_slice"] * SECTOR_BYTES * slices
    )
    for side in ("read", "write"):
        out[f"dram_bytes_{side}"] = out[f"dram_bytes_{side}"].fillna(out[f"dram_sectors_{side}"] * SECTOR_BYTES)
    for op in ("fadd", "fmul", "ffma"):
        out[f"fp32_{op}"] = out[f"fp32_{op}"].fillna(out[f"fp32_{op}_per_cycle"] * out["smsp_cycles_avg"])


# Columns the `verdict` preset does not collect but _derive_verdict_inputs fills from what it does.
DERIVABLE = {
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_throughput_pct",
    "theoretical_occupancy_pct",
    *(f"stall_{r}" for r in STALL_REASONS),
    *SM_UNITS,
    *MEMORY_UNITS,
}


def _derive_verdict_inputs(out: pd.DataFrame, raw: pd.DataFrame) -> None:
    """Fill what ncu derives in its sections from the few counters the `verdict` preset collects.

    - SM% / Memory%: ncu's are the largest of 25 / 26 breakdown units; without them, the largest of
      the units the report holds (`sol_units` counts them; NaN when ncu's own numbers are there).
    - DRAM%: `gpu__dram_throughput` equals the DRAM-cycles unit in every H200 capture.
    - theoretical occupancy: the fewest blocks any launch limit allows x warps per block, over the
      SM's warp slots (what ncu's Occupancy section reports as sm__maximum_warps_per_active_cycle_pct).
    - stall reasons: PC samples of warps stalled for a reason per sample of an issuing warp
      (`selected`), an estimate of the counter ratio (warps stalled per issue-active cycle);
      `stalls_sampled` is 1 where they were used.
    """
    import pandas as pd  # lazy

    out["sol_units"] = float("nan")
    for total, units in (("sm_throughput_pct", SM_UNITS), ("memory_throughput_pct", MEMORY_UNITS)):
        present = [c for c in units if out[c].notna().any()]
        if present and out[total].isna().all():
            out[total] = out[present].max(axis=1)
            out["sol_units"] = out["sol_units"].fillna(0) + len(present)
    if DRAM_PCT_ALIAS in raw:
        out["dram_throughput_pct"] = out["dram_throughput_pct"].fillna(
            pd.to_numeric(raw[DRAM_PCT_ALIAS], errors="coerce")
        )
    out["dram_throughput_pct"] = out["dram_throughput_pct"].fillna(out["dram_cycles_active_pct"])
    # Neither ncu's Memory% nor its breakdown units: DRAM% is the memory side's only measure left
    # (a lower bound of Memory%, which is the largest of L1, L2 and DRAM); `memory_from_dram` says so.
    from_dram = out["memory_throughput_pct"].isna() & out["dram_throughput_pct"].notna()
    out["memory_from_dram"] = from_dram.astype(float).where(from_dram)
    out["memory_throughput_pct"] = out["memory_throughput_pct"].fillna(out["dram_throughput_pct"])
    limits = out[[f"occupancy_limit_{k}" for k in ("registers", "shared_mem", "warps", "blocks")]].min(axis=1)
    warps = limits * (out["block_size"] / 32).apply(_ceil)  # warps per block, rounded up
    theo = warps.clip(upper=out["max_warps_per_sm"]) / out["max_warps_per_sm"] * 100
    out["theoretical_occupancy_pct"] = out["theoretical_occupancy_pct"].fillna(theo)
    out["stalls_sampled"] = float("nan")
    selected = pcsamp_metric("selected")
    if PCSAMP_COUNT in raw and selected in raw:
        issued = pd.to_numeric(raw[selected], errors="coerce").where(lambda x: x > 0)
        for r in STALL_REASONS:
            col, metric = f"stall_{r}", pcsamp_metric(r)
            if metric in raw and out[col].isna().all():
                out[col] = pd.to_numeric(raw[metric], errors="coerce") / issued
                out["stalls_sampled"] = 1.0


def _ceil(x: float) -> float:
    return float("nan") if x != x else float(-(-x // 1))  # NaN stays NaN


def _derive_hierarchy(out: pd.DataFrame) -> None:
    """FLOPs and per-level peaks from the raw counters (the report's own ceilings)."""
    out["tensor_flops"] = out["tensor_bf16_ops"]  # bf16 -> fp32 MMA ops (2 per multiply-add)
    out["tensor_peak_tflops"] = out["tensor_ops_per_cycle_peak"] * out["sm_cycles_per_second"] / 1e12
    out["fp32_flops"] = out["fp32_fadd"] + out["fp32_fmul"] + 2 * out["fp32_ffma"]
    out["fp32_peak_tflops"] = 2 * out["ffma_per_cycle_peak"] * out["sm_cycles_per_second"] / 1e12
    out["l1_peak_gbps"] = out["l1_bytes_per_cycle_peak"] * out["l1_cycles_per_second"] / 1e9
    out["l2_peak_gbps"] = out["l2_bytes_per_cycle_peak"] * out["l2_cycles_per_second"] / 1e9


# How a launch's DRAM bytes were had (the tidy column `dram_bytes_from` holds the key): the metrics named
# in the report and in `roofline analyze`, so a foreign capture's number says where it came from.
DRAM_BYTES_FROM = {
    1: "dram__bytes.sum",
    2: "dram__bytes_read.sum + dram__bytes_write.sum",
    3: "dram__sectors_read.sum + dram__sectors_write.sum, 32 bytes each",
    4: "dram__bytes_read.sum alone (the report counts no writes)",
    5: "dram__sectors_read.sum alone, 32 bytes each (the report counts no writes)",
}


def _dram_bytes(out: pd.DataFrame, rw_bytes: pd.Series) -> None:
    """DRAM bytes where the report lacks dram__bytes.sum: read + write (bytes, else sectors), else the reads
    alone (a lower bound, said so); `dram_bytes_from` keys DRAM_BYTES_FROM. `rw_bytes`: launches whose reads
    came as bytes (not sectors)."""
    total, read, write = out["dram_bytes"], out["dram_bytes_read"], out["dram_bytes_write"]
    how = total.notna() * 1.0
    both = total.isna() & read.notna() & write.notna()
    alone = total.isna() & read.notna() & write.isna()
    how = how.where(~both, rw_bytes.map({True: 2.0, False: 3.0}))
    how = how.where(~alone, rw_bytes.map({True: 4.0, False: 5.0}))
    out["dram_bytes"] = total.fillna(read + write).fillna(read)
    out["dram_bytes_from"] = how.where(how > 0)
