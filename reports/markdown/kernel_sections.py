"""A section per kernel (K1, K2, ...): its facts table (launches, time, DRAM, compute, intensity,
throughputs, occupancy, stalls, bound, gap), the advice, and a folded block with the evidence, ncu's own
rule and the hierarchical roofline."""

from __future__ import annotations

from reports.markdown.blocks import code, details, fmt, pct, plain, table
from reports.markdown.context import Context
from reports.markdown.facts import bound, dram_pct, measured_dram, name
from reports.meta import STALL_UNIT_SHORT, ReportMeta
from reports.numbers import ms, ratio
from roofline.analysis.hierarchy import padding_note
from roofline.analysis.summary import KernelSummary
from roofline.analysis.verdict import STALL_MEANING


def kernel_sections(ctx: Context) -> list[str]:
    analysis = ctx.analysis
    q_len = analysis.workload.q_len if analysis.workload is not None else None
    out: list[str] = []
    for i, k in enumerate(analysis.kernels):
        out += kernel_section(i, k, ctx.meta, q_len)
    return out


def kernel_section(i: int, k: KernelSummary, meta: ReportMeta, q_len: int | None = None) -> list[str]:
    out = [f"### K{i + 1} {code(name(k))}", ""] + table(["", ""], _facts(k, meta, q_len)) + [""]
    if k.advice:
        out += [f"Try: {k.advice}.", ""]
    return out + details("Evidence, ncu's rule, hierarchical roofline", _evidence(k) + _hierarchy(k))


def _facts(k: KernelSummary, meta: ReportMeta, q_len: int | None) -> list[list[str]]:
    return [
        [
            "launches, grid x block",
            f"{k.launches}, {fmt(k.grid_size, '.0f')} x {fmt(k.block_size, '.0f')}",
        ],
        [
            "time per launch (median)",
            ms(k.duration_ms, "–") + (" ms" if k.duration_ms is not None else ""),
        ],
        ["DRAM throughput", _dram(k, meta)],
        ["compute", _compute(k, q_len)],
        ["arithmetic intensity", _intensity(k)],
        ["SM / memory throughput", f"{pct(k.sm_throughput_pct)} / {pct(k.memory_throughput_pct)} of peak"],
        ["L2 hit rate", pct(k.l2_hit_rate_pct)],
        ["occupancy achieved / theoretical", f"{pct(k.achieved_occupancy_pct)} / {pct(k.theoretical_occupancy_pct)}"],
        [
            "registers per thread, waves per SM",
            f"{fmt(k.registers_per_thread, '.0f')}, {fmt(k.waves_per_sm, '.2f')}",
        ],
        ["top stalls", _stalls(k)],
        ["bound", bound(k)],
        ["busiest unit", k.unit or "–"],
        ["share of step", pct(None if k.share_of_step is None else 100 * k.share_of_step)],
        ["gap to floor", ratio(k.gap_to_floor)],
    ]


def _dram(k: KernelSummary, meta: ReportMeta) -> str:
    measured = measured_dram(meta)
    dram = fmt(k.dram_gbps, ",.0f", " GB/s")
    if not k.dram_gbps and dram_pct(k) is not None:
        dram = f"{dram_pct(k):.1f}% of the report's own peak (no byte counts in the report)"
    elif k.dram_gbps and k.dram_peak_gbps:
        dram += f" ({100 * k.dram_gbps / k.dram_peak_gbps:.1f}% of the report's own {k.dram_peak_gbps:,.0f}"
        dram += f"; {100 * k.dram_gbps / measured:.1f}% of the measured {measured:,.0f})" if measured else ")"
    elif k.dram_gbps and measured:
        dram += f" ({100 * k.dram_gbps / measured:.1f}% of the measured {measured:,.0f}; the report holds no DRAM peak)"
    if k.dram_gbps and k.dram_from:
        dram += f"; from {k.dram_from}"
    return dram


def _compute(k: KernelSummary, q_len: int | None) -> str:
    h = k.hierarchy or {}
    compute = "– (no FLOP counters in the report)"
    if h.get("useful_flops"):
        compute = _flops_line(h, q_len)
    elif h.get("tflops") is not None:
        compute = f"{h['tflops']:.2f} TFLOP/s {h['compute_kind']}"
        if h.get("compute_pct"):
            compute += f" ({h['compute_pct']:.1f}% of {h['compute_peak_tflops']:,.0f})"
    return compute


def _flops_line(h: dict, q_len: int | None) -> str:
    """Useful (the workload's) and executed (ncu's) FLOPs, and what the ratio is."""
    x, tensor = h["executed_over_useful"], h["tensor_flops"] / h["useful_flops"]
    return (
        f"{h['useful_tflops']:.2f} TFLOP/s of useful work ({h['useful_flops'] / 1e9:,.2f} GFLOP, the "
        f"workload's); {h['tflops']:.2f} TFLOP/s executed ({h['flops'] / 1e9:,.2f} GFLOP counted by ncu: "
        f"{h['tensor_flops'] / 1e9:,.2f} tensor + {h['fp32_flops'] / 1e9:,.2f} FP32): {ratio(x)} the useful work"
        + (f"; tensor alone {ratio(tensor)}: {padding_note(tensor, q_len)}" if tensor > 1.05 else "")
    )


def _intensity(k: KernelSummary) -> str:
    h = k.hierarchy or {}
    levels = h.get("levels", [])
    key = "useful_arithmetic_intensity" if h.get("useful_flops") else "arithmetic_intensity"
    intensity = ", ".join(f"{lv['level']} {lv[key]:,.1f}" for lv in levels) + " FLOP/B" if levels else "–"
    if levels and h.get("useful_flops"):
        intensity += (
            " of useful work (executed: "
            + ", ".join(f"{lv['level']} {lv['arithmetic_intensity']:,.1f}" for lv in levels)
            + ")"
        )
    return intensity


def _stalls(k: KernelSummary) -> str:
    stalls = (
        "; ".join(
            f"{s['reason']} {s['cycles_per_issue']:.1f}"
            + (f" ({STALL_MEANING[s['reason']]})" if s["reason"] in STALL_MEANING else "")
            for s in k.top_stalls
        )
        or "– (no stall metrics in the report)"
    )
    if k.top_stalls:
        stalls = f"in {STALL_UNIT_SHORT}: {stalls}"
    return stalls


def _evidence(k: KernelSummary) -> list[str]:
    """The verdict's evidence, the full (mangled) name, and ncu's own SOLBottleneck rule beside the verdict."""
    body = [f"- {plain(e)}" for e in k.evidence]
    if k.mangled_name and k.mangled_name != k.kernel:
        body += ["", f"Full (mangled) name: {code(k.mangled_name)}"]
    if k.ncu_rule:
        agree = {True: "agrees with this verdict", False: "**disagrees** with this verdict", None: "not comparable"}[
            k.agrees_with_ncu
        ]
        body += ["", f"ncu's own SOLBottleneck rule ({agree}):", "", f"> {plain(k.ncu_rule)}"]
    return body


def _hierarchy(k: KernelSummary) -> list[str]:
    """The hierarchical roofline table: per level the bytes, intensity, throughput and roof (with the useful
    work's intensity and the executed roof where the workload's FLOPs are known)."""
    h = k.hierarchy or {}
    if h.get("levels") and h.get("useful_flops"):
        return [
            "",
            f"Hierarchical roofline (useful FLOPs: {h['useful_flops'] / 1e9:,.2f} G, the workload's; "
            f"executed: {h['tensor_flops'] / 1e9:,.2f} G tensor + {h['fp32_flops'] / 1e9:,.2f} G FP32, "
            f"{ratio(h['executed_over_useful'])}; peaks are the report's own). The roof is the useful "
            "work's, as in the floor section:",
            "",
        ] + table(
            [
                "level",
                "bytes",
                "FLOP/B useful",
                "FLOP/B executed",
                "GB/s",
                "% of peak",
                "attainable TFLOP/s",
                "roof",
                "roof (executed)",
            ],
            [_level_row(lv, useful=True) for lv in h["levels"]],
            "lrrrrrrll",
        )
    if h.get("levels"):
        return [
            "",
            f"Hierarchical roofline (FLOPs: {h['tensor_flops'] / 1e9:,.2f} G tensor + "
            f"{h['fp32_flops'] / 1e9:,.2f} G FP32, as ncu counted them; peaks are the report's own):",
            "",
        ] + table(
            ["level", "bytes", "FLOP/B", "GB/s", "% of peak", "attainable TFLOP/s", "roof"],
            [_level_row(lv, useful=False) for lv in h["levels"]],
            "lrrrrrl",
        )
    return []


def _level_row(lv: dict, useful: bool) -> list[str]:
    """A row of the hierarchical roofline table; `useful`: with the useful work's intensity and the executed roof."""
    intensity = [f"{lv['useful_arithmetic_intensity']:,.1f}"] if useful else []
    return [
        lv["level"],
        f"{lv['bytes'] / 1e6:,.1f} MB",
        *intensity,
        f"{lv['arithmetic_intensity']:,.1f}",
        f"{lv['gbps']:,.0f}",
        fmt(lv.get("pct_of_peak"), ".2f"),
        fmt(lv.get("attainable_tflops"), ",.1f"),
        lv.get("roof") or "–",
        *([lv.get("executed_roof") or "–"] if useful else []),
    ]
