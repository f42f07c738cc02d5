"""The Kernels section: one row per kernel (time, share of the step, DRAM, FLOP/s, intensity, L2, occupancy,
top stalls, bound, gap to the floor) and the note that says what each column counts."""

from __future__ import annotations

from reports.charts.common import kernel_label
from reports.markdown.blocks import code, fmt, table
from reports.markdown.context import Context
from reports.markdown.facts import bound, dram_level, dram_pct, name, stalls
from reports.meta import STALL_UNIT, STALL_UNIT_SHORT
from reports.numbers import ms, ratio
from roofline.analysis.summary import Analysis, KernelSummary

HEADER = [
    "#",
    "kernel",
    "launches",
    "time (ms)",
    "% of step",
    "DRAM GB/s",
    "% of DRAM peak",
    "TFLOP/s",
    "FLOP/B (DRAM)",
    "L2 hit %",
    "occupancy %",
    f"top stalls ({STALL_UNIT_SHORT})",
    "bound",
]


def _row(i: int, k: KernelSummary, floor: bool) -> list[str]:
    h = k.hierarchy or {}
    share = k.share_of_step
    return [
        f"K{i + 1}",
        code(kernel_label(i, name(k), 60).split(" ", 1)[1]),
        str(k.launches),
        ms(k.duration_ms),
        fmt(None if share is None else 100 * share, ".1f"),
        fmt(k.dram_gbps, ",.0f"),
        fmt(dram_pct(k), ".1f"),
        fmt(h.get("useful_tflops", h.get("tflops")), ".2f"),
        fmt(
            dram_level(k).get("useful_arithmetic_intensity", dram_level(k).get("arithmetic_intensity")),
            ",.1f",
        ),
        fmt(k.l2_hit_rate_pct, ".1f"),
        fmt(k.achieved_occupancy_pct, ".1f"),
        stalls(k),
        bound(k),
    ] + ([ratio(k.gap_to_floor)] if floor else [])


def _note(analysis: Analysis, floor: bool) -> str:
    """What the columns count."""
    useful = any((k.hierarchy or {}).get("useful_flops") for k in analysis.kernels)
    files = len({k.source for k in analysis.kernels if k.source}) > 1
    return (
        "Time is the median per launch; % of step is the kernel's share of all kernel time"
        + (" in its own file (each file of a folder is its own capture); " if files else "; ")
        + "% of DRAM peak is against the report's own peak; "
        f"{STALL_UNIT_SHORT}: {STALL_UNIT}, the unit of every stall number here. "
        + (
            "TFLOP/s and FLOP/B count the workload's own FLOPs where it is known (the floor's, split over the "
            "step's kernels by the tensor FLOPs ncu counted); ncu's executed count is in each kernel's section. "
            if useful
            else ""
        )
        + (
            "Gap to floor (only where one kernel is the whole step): its time over the workload's floor."
            if floor
            else "No gap to floor: the workload is not known."
        )
    )


def kernel_table(ctx: Context) -> list[str]:
    analysis = ctx.analysis
    floor = analysis.floor is not None
    header = HEADER + (["gap to floor"] if floor else [])
    rows = [_row(i, k, floor) for i, k in enumerate(analysis.kernels)]
    out = ["## Kernels", ""] + table(header, rows, "llrrrrrrrrrll" + ("l" if floor else ""))
    return out + ["", _note(analysis, floor), ""]
