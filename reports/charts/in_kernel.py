"""The in-kernel timeline chart: for the busiest, median and idlest SM, one lane per role (warpgroup) and one for
the combine's programs there, each stage a bar over time (µs from the split kernel's first start)."""

from __future__ import annotations

from pathlib import Path

from reports.charts.common import LEGEND, pyplot, save
from roofline.analysis.timeline import InKernelTimeline

# One colour per stage, the same in every chart: waits warm, math cool, loads purple, the rest grey.
STAGE_COLOURS = {
    "wait loads": "#1f77b4",
    "wait P": "#ff7f0e",
    "wait maxima": "#ffbb78",
    "wait tail": "#e7ba52",
    "wait buffer": "#8c6d31",
    "score MMA": "#d62728",
    "value MMA": "#ff9896",
    "value MMA + scores ahead": "#f7b6d2",
    "softmax": "#2ca02c",
    "post P": "#98df8a",
    "issue loads": "#9467bd",
    "prologue": "#c7c7c7",
    "epilogue": "#7f7f7f",
    "combine wait": "#eeeeee",
    "combine": "black",
}


def in_kernel_chart(tl: InKernelTimeline | None, stem: Path, title: str = "") -> list[Path]:
    """Lanes per role for the picked SMs (PNG and SVG); [] without a timeline or lanes."""
    if tl is None or not any(tl.lanes.values()):
        return []
    _, plt = pyplot()
    rows = [(sm, lane) for sm in tl.sms for lane in dict.fromkeys(s.lane for s in tl.lanes.get(sm.label, []))]
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.32 * len(rows)))
    labels = []
    for y, (sm, lane) in enumerate(rows):
        spans = [s for s in tl.lanes[sm.label] if s.lane == lane]
        for stage, colour in STAGE_COLOURS.items():
            bars = [(s.start_us, s.end_us - s.start_us) for s in spans if s.stage == stage]
            if bars:
                ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colour, edgecolor="none")
        labels.append(f"{sm.label} SM {sm.sm}: {lane}")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("µs from the split kernel's first start")
    used = {s.stage for spans in tl.lanes.values() for s in spans}
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for st, c in STAGE_COLOURS.items() if st in used]
    ax.legend(
        handles, [st for st in STAGE_COLOURS if st in used], loc="center left", bbox_to_anchor=(1.01, 0.5), **LEGEND
    )
    ax.set_title(f"inside {tl.kernel}, per SM{': ' + title if title else ''}", fontsize=9)
    fig.tight_layout()
    files = save(fig, stem)
    return files
