"""The Charts section: each chart written beside the report with its caption (what the markers mean, which
kernels fall off the roofline chart and why), or one line saying why a chart is not there."""

from __future__ import annotations

from reports.charts.roofline import bandwidth_lines, floor_point, report_roofs, roofline_layout, roofline_points
from reports.markdown.blocks import code, figure
from reports.markdown.context import Context
from reports.meta import STALL_UNIT
from roofline.analysis.summary import Analysis


def charts(ctx: Context) -> list[str]:
    out = ["## Charts", ""] + _roofline(ctx)
    if "stalls" in ctx.charts:
        out += figure(
            ctx.charts["stalls"],
            "Top warp stalls per kernel",
            "Top warp stalls",
            f", {STALL_UNIT}, each reason in its own colour in every report.",
        )
    elif any(k.top_stalls for k in ctx.analysis.kernels):
        out += ["No stall chart: charts were not written with this report.", ""]
    elif not ctx.timeline_only:
        out += ["No stall chart: the report has no warp-stall metrics.", ""]
    if "timeline" in ctx.charts:
        out += figure(
            ctx.charts["timeline"],
            "Timeline: the host's steps and the GPU's kernels",
            "Timeline",
            " from nsys: per step the host's NVTX range (orange) and the GPU's span from first kernel start to "
            "last kernel end (blue); gaps in the GPU's row are time it waited for the host.",
        )
    return out


def _roofline(ctx: Context) -> list[str]:
    """The roofline chart and its caption, or why there is none."""
    analysis, meta = ctx.analysis, ctx.meta
    if "roofline" in ctx.charts:
        return figure(
            ctx.charts["roofline"],
            f"Roofline: each kernel against the {analysis.gpu.name or 'the GPU'} roofs",
            "Roofline",
            ": each kernel a filled point at its "
            "DRAM arithmetic intensity, hollow markers at its L2 and L1 intensity; roofs coloured by level, "
            "solid the report's own, dashed the datasheet's, dotted measured."
            + (
                " Where the workload is known, a kernel's point is its useful work (the workload's FLOPs, split "
                "over the step's kernels by the tensor FLOPs ncu counted); an x marks the work ncu counted "
                "(executed, padded MMA rows included)."
                if any(p["executed"] for p in roofline_points(analysis))
                else ""
            )
            + (
                " The star is the workload's floor: the vertical distance from a point to it is the gap."
                if floor_point(analysis.floor)
                else ""
            )
            + _bandwidth_caption(analysis)
            + _off_chart(analysis, report_roofs(analysis) + list(meta.roofs)),
        )
    if roofline_points(analysis) or bandwidth_lines(analysis):
        return ["No roofline chart: charts were not written with this report.", ""]
    if ctx.timeline_only:
        return [
            "No roofline or stall chart: the source is an nsys timeline, without hardware counters "
            f"(profile with {code('--tool ncu')} or {code('both')} for them).",
            "",
        ]
    return [
        "No roofline chart: no kernel in the report has byte counters and a time ("
        + (
            f"this run's preset, {code(meta.preset)}, does not collect them; {code('--preset roofline')} "
            f"(the default) and {code('--preset full')} do"
            if meta.preset
            else f"ncu's default sections lack them; {code('roofline profile')} collects them"
        )
        + ").",
        "",
    ]


def _bandwidth_caption(analysis: Analysis) -> str:
    """What a dashed kernel line is, and the metrics its bytes came from."""
    lines = bandwidth_lines(analysis)
    if not lines:
        return ""
    said = "; ".join(
        f"K{b['index'] + 1} {b['gbps']:,.0f} GB/s from {analysis.kernels[b['index']].dram_from or 'its DRAM bytes'}"
        for b in lines
    )
    return (
        " A dashed kernel line is a kernel whose capture counts bytes but no FLOPs: its achieved DRAM bandwidth, "
        f"parallel to the memory roofs (its place along the line needs the FLOPs): {said}."
    )


def _off_chart(analysis: Analysis, roofs: list) -> str:
    """Which kernels the roofline chart leaves out, and why (no FLOPs, not among the slowest, or
    beyond the axis)."""
    points = roofline_points(analysis)
    layout = roofline_layout(analysis, roofs)
    shown = {p["index"] for p in layout["points"]}
    lines = {b["index"] for b in bandwidth_lines(analysis)}
    no_flops = [
        f"K{i + 1}" for i in range(len(analysis.kernels)) if i not in {p["index"] for p in points} and i not in lines
    ]
    dropped = [f"K{p['index'] + 1}" for p in points if p["index"] not in shown]
    out = ""
    if no_flops:
        out += f" Not on the chart, no FLOPs counted: {', '.join(no_flops)}."
    if dropped:
        out += f" Left out to keep it readable (least time): {', '.join(dropped)}."
    if layout["off"]:
        out += (
            " Beyond the axis, drawn at its edge (the axis spans the points within a few decades of the "
            "median intensity): "
            + ", ".join(f"{label} {lv} at {ai:,.3g} FLOP/B" for label, lv, ai in layout["off"])
            + "."
        )
    return out
