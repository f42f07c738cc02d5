"""The timeline chart (from nsys): per step the host's NVTX range and the GPU's span of kernels, so a GPU
waiting for the host shows as gaps in its row."""

from __future__ import annotations

from pathlib import Path

from profiler.nsys_reader import Timeline
from reports.charts.common import RC, pyplot, save
from reports.numbers import known

MAX_STEPS = 12  # on the timeline chart; the table gives the medians over all steps


def timeline_chart(timeline: Timeline | None, stem: Path, title: str = "") -> list[Path]:
    """The profiled steps on one time axis (from nsys): per step the host's NVTX range and the GPU's
    span from first kernel start to last kernel end, so a GPU waiting for the host shows as gaps
    in its row. Writes stem.png and stem.svg; [] without steps that ran kernels."""
    rows = [] if timeline is None else timeline.steps.itertuples(index=False)
    steps = [s for s in rows if s.kernels and known(s.first_kernel_start_ns)]
    if not steps:
        return []
    total = len(steps)
    steps = steps[:MAX_STEPS]
    t0 = min(min(known(s.range_start_ns) or s.first_kernel_start_ns, s.first_kernel_start_ns) for s in steps)
    matplotlib, plt = pyplot()
    with matplotlib.rc_context(RC):
        fig, ax = plt.subplots(figsize=(9.5, 2.4))
        host = [
            ((s.range_start_ns - t0) / 1e6, (s.range_end_ns - s.range_start_ns) / 1e6)
            for s in steps
            if known(s.range_start_ns) is not None
        ]
        gpu = [
            ((s.first_kernel_start_ns - t0) / 1e6, (s.last_kernel_end_ns - s.first_kernel_start_ns) / 1e6)
            for s in steps
        ]
        if host:
            ax.broken_barh(host, (1.6, 0.8), facecolors="tab:orange", edgecolors="white", linewidths=0.6)
        ax.broken_barh(gpu, (0.6, 0.8), facecolors="tab:blue", edgecolors="white", linewidths=0.6)
        for n, (x, w) in enumerate(gpu):
            if n < 3 or n == len(gpu) - 1:
                ax.text(x + w / 2, 1.0, f"{n}", ha="center", va="center", fontsize=7, color="white")
        ax.set_yticks([1.0, 2.0], ["GPU: kernels", "host: NVTX step"])
        ax.set_ylim(0.3, 2.7)
        ax.set_xlabel("time from the first step (ms)")
        ax.set_title(
            (title or "Timeline")
            + (f" (the first {len(steps)} of {total} steps)" if total > len(steps) else f" ({total} steps)")
        )
        ax.grid(True, axis="x", color="0.9", lw=0.6)
        ax.set_axisbelow(True)
        out = save(fig, stem)
    return out
