"""The stall chart: each kernel's top warp stalls as stacked bars, each reason in the same colour in
every report, so before/after charts can be compared by eye."""

from __future__ import annotations

from pathlib import Path

from reports.charts.common import LEGEND, MAX_KERNELS, RC, kernel_label, pyplot, save
from reports.meta import STALL_UNIT
from roofline.analysis.summary import Analysis

# One colour per ncu stall reason (profiler.metrics.STALL_REASONS), the same in every chart, so
# before/after charts can be compared by eye; memory waits blue, pipes and queues warm, sync purple.
STALL_COLOR = {
    "long_scoreboard": "#1f77b4",
    "short_scoreboard": "#aec7e8",
    "lg_throttle": "#17becf",
    "tex_throttle": "#9edae5",
    "mio_throttle": "#2ca02c",
    "math_pipe_throttle": "#d62728",
    "gmma": "#ff9896",
    "wait": "#ff7f0e",
    "dispatch_stall": "#ffbb78",
    "not_selected": "#98df8a",
    "selected": "#c5b0d5",
    "barrier": "#9467bd",
    "membar": "#8c564b",
    "sleeping": "#c49c94",
    "branch_resolving": "#e377c2",
    "no_instruction": "#f7b6d2",
    "imc_miss": "#bcbd22",
    "drain": "#dbdb8d",
    "misc": "#7f7f7f",
}
OTHER_STALL_COLOR = "#c7c7c7"  # a reason a newer ncu adds, until it gets its own


def _dark(hex_color: str) -> bool:
    """Whether white text reads on this colour (relative luminance under one half)."""
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5


def stall_chart(analysis: Analysis, stem: Path, title: str = "") -> list[Path]:
    """Horizontal stacked bars: each kernel's top warp stalls in warps stalled per issued instruction,
    each reason in its own fixed colour (STALL_COLOR).
    Writes stem.png and stem.svg; [] when the report carries no stall metrics."""
    rows = [(i, k) for i, k in enumerate(analysis.kernels) if k.top_stalls]
    if not rows:
        return []
    total = len(rows)
    rows = sorted(sorted(rows, key=lambda r: -(r[1].duration_ms or 0))[:MAX_KERNELS], key=lambda r: r[0])
    reasons: list[str] = []
    for _, k in rows:
        reasons += [s["reason"] for s in k.top_stalls if s["reason"] not in reasons]
    color = {r: STALL_COLOR.get(r, OTHER_STALL_COLOR) for r in reasons}
    matplotlib, plt = pyplot()
    with matplotlib.rc_context(RC):
        fig, ax = plt.subplots(figsize=(9.5, 1.2 + 0.55 * len(rows)))
        labels = [kernel_label(i, k.label or k.kernel) for i, k in rows]
        widest = max(sum(s["cycles_per_issue"] or 0 for s in k.top_stalls) for _, k in rows) or 1
        seen: set[str] = set()
        for y, (_, k) in enumerate(rows):
            left = 0.0
            for s in k.top_stalls:
                v = s["cycles_per_issue"] or 0
                bar = ax.barh(
                    [y],
                    [v],
                    left=left,
                    height=0.6,
                    color=color[s["reason"]],
                    edgecolor="white",
                    label=None if s["reason"] in seen else s["reason"],
                )
                seen.add(s["reason"])
                if v >= 0.04 * widest:
                    ax.bar_label(
                        bar,
                        labels=[f"{v:.1f}"],
                        label_type="center",
                        fontsize=8,
                        color="white" if _dark(color[s["reason"]]) else "black",
                    )
                left += v
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"warp stalls ({STALL_UNIT}), top reasons per kernel")
        ax.set_title(
            (title or "Top warp stalls")
            + ("" if len(rows) == total else f" (the {len(rows)} of {total} kernels with the most time)")
        )
        ax.grid(True, axis="x", color="0.9", lw=0.6)
        ax.set_axisbelow(True)
        handles, names = ax.get_legend_handles_labels()
        ax.legend(
            handles,
            names,
            title="stall reason",
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            **LEGEND,
        )
        out = save(fig, stem)
    return out
