"""The 'where the warps wait' chart: per kernel, the share of its PC samples in each wait class."""

from __future__ import annotations

from pathlib import Path

from reports.charts.common import pyplot, save
from reports.waits import kernels_with_waits
from roofline.analysis.summary import Analysis

# One colour per wait class (profiler/ncu_source.py WAIT_CLASSES), the same in every chart.
CLASS_COLOURS = {
    "load barrier": "#1f77b4",
    "MMA wait": "#d62728",
    "role barrier": "#ff7f0e",
    "block barrier": "#e7ba52",
    "shared memory": "#2ca02c",
    "global memory": "#9467bd",
    "math": "#8c564b",
    "other": "#7f7f7f",
}


def waits_chart(analysis: Analysis, stem: Path, title: str = "") -> list[Path]:
    """A stacked bar per kernel: the share of samples in each wait class (PNG and SVG); [] without samples."""
    kernels = kernels_with_waits(analysis)
    if not kernels:
        return []
    _, plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 2.4 + 0.4 * len(kernels)))
    for row, (name, w) in enumerate(kernels):
        left = 0.0
        for cls, colour in CLASS_COLOURS.items():
            share = 100 * w.by_class.get(cls, 0.0)
            if share > 0:
                ax.barh(row, share, left=left, color=colour, label=cls if row == 0 else None)
                left += share
    ax.set_yticks(range(len(kernels)), [n[:40] for n, _ in kernels])
    ax.invert_yaxis()
    ax.set_xlabel("% of PC samples")
    ax.set_xlim(0, 100)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in CLASS_COLOURS.values()]
    ax.legend(handles, list(CLASS_COLOURS), fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"where the warps wait{': ' + title if title else ''}", fontsize=9)
    fig.tight_layout()
    files = save(fig, stem)
    return files
