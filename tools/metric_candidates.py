"""Candidate metric lists whose replay-pass cost `tools/capture_h200_fixtures.sh` measures on the H200
(prints NAME<TAB>comma-list lines). The chosen presets live in profiler/ (this only records the search)."""

from profiler.ncu import ROOFLINE_METRICS, STALL_REASONS, VERDICT_METRICS, stall_metric

CORE = tuple(m for m in VERDICT_METRICS if "stalled" not in m)
STALLS = tuple(stall_metric(r) for r in STALL_REASONS)
PCSAMP = ("smsp__pcsamp_sample_count",) + tuple(
    f"smsp__pcsamp_warps_issue_stalled_{r}" for r in (
        "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
        "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instructions", "not_selected", "selected",
        "short_scoreboard", "sleeping", "tex_throttle", "wait", "warpgroup_arrive"))
PIPES = tuple(f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active" for p in (
    "alu", "fma", "fmaheavy", "fp64", "lsu", "tensor_op_hmma", "tensor_op_gmma", "xu", "uniform", "adu", "cbu",
    "tma")) + ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__inst_issued.avg.pct_of_peak_sustained_active",
               "sm__issue_active.avg.pct_of_peak_sustained_elapsed")
MEMUNITS = ("l1tex__throughput.avg.pct_of_peak_sustained_active", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__t_sectors.sum", "lts__t_sectors.sum",
            "dram__sectors_read.sum", "dram__sectors_write.sum")
BREAKDOWN = ("breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed",
             "breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")

CANDIDATES = {
    "core": CORE,
    "core_stalls": CORE + STALLS,
    "core_pcsamp": CORE + PCSAMP,
    "core_pipes": CORE + PIPES,
    "core_memunits": CORE + MEMUNITS,
    "core_breakdown": CORE + BREAKDOWN,
    "roofline_only": ("gpu__time_duration.sum",) + ROOFLINE_METRICS,
    "core_pcsamp_pipes_mem": CORE + PCSAMP + PIPES + MEMUNITS,
}

# Second search (no --section at all: the SpeedOfLight section alone costs 10 passes on the H200).
LAUNCH = tuple(m for m in CORE if m.startswith(("launch__", "device__", "gpu__time"))) + (
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks", "sm__maximum_warps_per_active_cycle_pct")
SOL = ("sm__throughput.avg.pct_of_peak_sustained_elapsed",
       "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
DRAM = ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum")
OCC = ("sm__warps_active.avg.pct_of_peak_sustained_active", "lts__t_sector_hit_rate.pct")
NOSOL = {
    "launch": LAUNCH,
    "launch_sm": LAUNCH + SOL[:1],
    "launch_mem": LAUNCH + SOL[1:],
    "launch_sol": LAUNCH + SOL,
    "launch_sol_dram": LAUNCH + SOL + DRAM,
    "launch_sol_dram_occ": LAUNCH + SOL + DRAM + OCC,
    "launch_pcsamp": LAUNCH + PCSAMP,
    "v_pcsamp": LAUNCH + SOL + DRAM + OCC + PCSAMP,
    "v_stalls": LAUNCH + SOL + DRAM + OCC + STALLS,
    "v_breakdown": LAUNCH + BREAKDOWN + DRAM + OCC,
    "v_breakdown_pcsamp": LAUNCH + BREAKDOWN + DRAM + OCC + PCSAMP,
    "v_pipes_pcsamp": LAUNCH + SOL + DRAM + OCC + PCSAMP + PIPES,
}

if __name__ == "__main__":
    import sys

    table = NOSOL if sys.argv[1:] == ["nosol"] else CANDIDATES
    for name, metrics in table.items():
        print(f"{name}\t{','.join(dict.fromkeys(metrics))}")
