"""Candidate metric lists whose replay-pass cost `tools/capture_h200_fixtures.sh` (CANDIDATES, with the
SpeedOfLight section) and `tools/pass_search.sh` (`nosol`, no section) measure on the H200 (prints
NAME<TAB>comma-list lines). The chosen presets live in profiler/metrics.py (this only records the search:
verdict = k_small_pc, roofline = r_small_pc_counts; tests/test_metric_presets.py checks they match)."""

from profiler.metrics import STALL_REASONS, stall_metric

# The lists `profile` used before the presets (with --section SpeedOfLight: 17 passes), kept as the search's start.
VERDICT_METRICS = (
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__bytes.sum.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__waves_per_multiprocessor",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block",
    "device__attribute_display_name",
    "device__attribute_multiprocessor_count",
) + tuple(stall_metric(r) for r in STALL_REASONS)

# Hierarchical roofline: FLOPs (tensor and FP32) and bytes at L1, L2 and DRAM, with the
# report's own peaks (per-cycle peak x clock), plus what limits occupancy.
ROOFLINE_METRICS = (
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__cycles_elapsed.avg.per_second",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "l1tex__t_bytes.sum",
    "l1tex__t_bytes.sum.peak_sustained",
    "l1tex__cycles_elapsed.avg.per_second",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_bytes.sum",
    "lts__t_bytes.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "dram__bytes.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
)


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
# Third search: launch attributes (no counters), the units that led SM% and Memory% in the --set full
# captures of tests/fixtures/h200/full and corpus, and the roofline's FLOP and byte counts.
_E = ".avg.pct_of_peak_sustained_elapsed"
LAUNCH2 = tuple(m for m in LAUNCH if m != "sm__maximum_warps_per_active_cycle_pct") + (
    "device__attribute_max_warps_per_multiprocessor",)
SMU = tuple(m + _E for m in (
    "sm__issue_active", "sm__pipe_alu_cycles_active", "sm__pipe_tensor_cycles_active", "sm__inst_executed_pipe_lsu",
    "sm__pipe_fma_cycles_active", "sm__pipe_fmaheavy_cycles_active", "sm__inst_executed_pipe_adu",
    "sm__inst_executed_pipe_xu"))
MEMU = tuple(m + _E for m in (
    "l1tex__data_pipe_lsu_wavefronts", "lts__t_sectors", "lts__lts2xbar_cycles_active", "dram__cycles_active",
    "l1tex__lsu_writeback_active", "l1tex__data_bank_reads", "lts__d_sectors", "lts__t_tag_requests"))
RCOUNTS = ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
           "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
           "l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum", "sm__cycles_elapsed.avg.per_second",
           "l1tex__cycles_elapsed.avg.per_second", "lts__cycles_elapsed.avg.per_second",
           "dram__cycles_elapsed.avg.per_second",
           "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
           "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "l1tex__t_bytes.sum.peak_sustained",
           "lts__t_bytes.sum.peak_sustained", "dram__bytes.sum.peak_sustained")
RSECTORS = tuple(m for m in RCOUNTS if m not in ("l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum")) + (
    "l1tex__t_sectors.sum", "lts__t_sectors.sum", "dram__sectors_read.sum", "dram__sectors_write.sum")

NOSOL = {
    # third search (branch metrics): subsets of ncu's throughput breakdown, sampled stalls, derived occupancy
    "k_units_pc": LAUNCH2 + SMU + MEMU + DRAM[:1] + OCC[:1] + PCSAMP,
    "k_small_pc": LAUNCH2 + SMU[:4] + MEMU[:4] + OCC[:1] + PCSAMP,
    "k_units": LAUNCH2 + SMU + MEMU + DRAM[:1] + OCC[:1],
    "k_sm_units": LAUNCH2 + SMU,
    "k_mem_units": LAUNCH2 + MEMU,
    "k_sol_occ_pc": LAUNCH2 + SOL + OCC[:1] + PCSAMP,
    "r_counts": LAUNCH2 + RCOUNTS,
    "r_sectors": LAUNCH2 + RSECTORS,
    "r_units_pc_counts": LAUNCH2 + SMU + MEMU + DRAM[:1] + OCC[:1] + PCSAMP + RCOUNTS,
    "r_units_pc_sectors": LAUNCH2 + SMU + MEMU + DRAM[:1] + OCC[:1] + PCSAMP + RSECTORS,
    "r_small_pc_counts": LAUNCH2 + SMU[:4] + MEMU[:4] + OCC[:1] + PCSAMP + RCOUNTS,
    "r_sol_pc_counts": LAUNCH2 + SOL + DRAM[:1] + OCC[:1] + PCSAMP + RCOUNTS,
    # second search (lead)
    "launch": LAUNCH,
    "launch_sm": LAUNCH + SOL[:1],
    "launch_mem": LAUNCH + SOL[1:],
    "launch_sol": LAUNCH + SOL,
    "launch_sol_dram_occ": LAUNCH + SOL + DRAM + OCC,
    "launch_pcsamp": LAUNCH + PCSAMP,
    "v_pcsamp": LAUNCH + SOL + DRAM + OCC + PCSAMP,
    "v_breakdown_pcsamp": LAUNCH + BREAKDOWN + DRAM + OCC + PCSAMP,
}

if __name__ == "__main__":
    import sys

    table = NOSOL if sys.argv[1:] == ["nosol"] else CANDIDATES
    for name, metrics in table.items():
        print(f"{name}\t{','.join(dict.fromkeys(metrics))}")
