"""The "Over the launch's lifetime" section: ncu's PM sampling (roofline/analysis/pm_sampling.py), for any run whose
report holds it: per kernel, when DRAM reaches its steady level, the steady levels, when the DRAM stream ends
and the tail with fewer than half the SMs active, with the chart of the throughputs and warp states over time.
Where the in-kernel timeline exists it stays the primary view; this section says so."""

from __future__ import annotations

from reports.markdown.blocks import code, figure, table
from reports.markdown.context import Context
from reports.pm_sampling import PM_HEADER, dram_words, pm_rows, steady_words, tail_words, window_words


def pm_sampling(ctx: Context) -> list[str]:
    launches = ctx.report.pm_sampling
    if not launches:
        return []
    first = launches[0]
    out = [
        "## Over the launch's lifetime (ncu PM sampling)",
        "",
        f"ncu sampled the GPU's throughput counters and warp states every {first.interval_us:.1f} µs of each "
        "kernel's first launch (no change to its source; each time is good to one sample). Busy: the samples with "
        "at least half the SMs active; the levels are their medians; the tail runs from the last busy sample to the "
        "launch's end; stalls are warps per SM sub-partition.",
        "",
    ]
    if ctx.report.in_kernel is not None and ctx.report.in_kernel.programs:
        out += [
            "The in-kernel timeline above is the primary view of the stamped kernel; this is the counters' view.",
            "",
        ]
    out += table(PM_HEADER, pm_rows(launches), "lrrrrrrrrl") + [""]
    for s in launches:
        out += [
            f"- {code(s.kernel)} ({window_words(s)}): {steady_words(s)}; {dram_words(s)}; {tail_words(s)}.",
        ]
    out.append("")
    png = ctx.charts.get("pm_sampling")
    if png is not None:
        caption = ": per kernel, the throughputs over the SMs active (shaded grey), the warp states stacked below"
        out += figure(png, "PM sampling", "PM sampling", caption)
    return out
