"""A kernel's numbers as the report words them, shared by the kernel table and the kernel sections: its
label, its DRAM level and share of peak, its top stalls, its bound."""

from __future__ import annotations

from reports.meta import ReportMeta
from roofline.analysis.summary import KernelSummary


def dram_level(k: KernelSummary) -> dict:
    return next((lv for lv in (k.hierarchy or {}).get("levels", []) if lv["level"] == "DRAM"), {})


def dram_pct(k: KernelSummary) -> float | None:
    """DRAM throughput, % of the report's own peak (ncu's own number when the report has it)."""
    if k.dram_throughput_pct is not None:
        return k.dram_throughput_pct
    if k.dram_gbps and k.dram_peak_gbps:
        return 100 * k.dram_gbps / k.dram_peak_gbps
    return None


def name(k: KernelSummary) -> str:
    """The row's distinct label (kernel + what tells it apart), else the kernel name."""
    return k.label or k.kernel


def stalls(k: KernelSummary, n: int = 3) -> str:
    return ", ".join(f"{s['reason']} {s['cycles_per_issue']:.1f}" for s in k.top_stalls[:n]) or "–"


def bound(k: KernelSummary) -> str:
    why = k.roof or k.cause
    return f"**{k.bound}**" + (f": {why}" if why else "")


def measured_dram(meta: ReportMeta) -> float | None:
    return next((r.value for r in meta.roofs if r.level == "DRAM" and r.kind == "measured"), None)
