"""The Timeline section (from nsys): per step the kernels, the idle gaps between them, the launch calls
and the host, the launch-bound verdict, and the kernels on the timeline beside ncu's replayed times."""

from __future__ import annotations

from profiler.nsys_summary import overlapping_launch_ms
from reports.markdown.blocks import code, details, prose, table
from reports.markdown.context import Context
from reports.meta import LAUNCH_BOUND_PCT, nsys_version
from reports.numbers import known, ms


def timeline(ctx: Context) -> list[str]:
    """What nsys saw: per step the kernels, the idle gaps between them, the launch calls, the host."""
    t = ctx.report.timeline
    if t is None:
        return []
    s = t.summary
    where = f"the NVTX range '{s['range']}'" if s.get("range") else "the whole trace (no NVTX range)"
    out = [
        "## Timeline",
        "",
        f"From nsys {nsys_version(ctx.meta.versions, s) or '(version unknown)'}: "
        f"{s.get('launches_in_range') or s['launches']} launches in {where}, "
        + (f"{s['steps']} steps." if s["steps"] else "no NVTX step ranges (no per-step table)."),
        "",
    ]
    if s.get("step_ms_median") is not None:
        out += _per_step(s)
    if not t.kernels.empty:
        out += _kernels(ctx)
    out += [f"- {prose(n)}" for n in s.get("notes", [])]
    return out


def _per_step(s: dict) -> list[str]:
    """The medians per step, and whether the GPU waited for the host."""
    busy = s.get("gpu_busy_pct_of_range")
    bound = (
        f"**launch-bound**: the GPU ran kernels only {busy:.0f}% of the profiled range; it waits for the host"
        if busy is not None and busy < LAUNCH_BOUND_PCT
        else f"not launch-bound: the GPU ran kernels {busy:.0f}% of the profiled range"
        if busy is not None
        else "launch-bound or not: unknown (no NVTX range)"
    )
    n = s["steps"] - s["steps_without_kernels"]
    out = table(
        ["per step (median of " + str(n) + ")", "ms"],
        [
            ["first kernel start to last kernel end", ms(s["step_ms_median"])],
            [
                f"kernel time ({s['kernels_per_step']:.0f} kernel{'s' if s['kernels_per_step'] != 1 else ''})",
                ms(s["kernel_ms_per_step"]),
            ],
            [
                f"idle between kernels ({s['idle_pct']:.0f}%)"
                if s.get("idle_pct") is not None
                else "idle between kernels",
                ms(s["idle_ms_per_step"]),
            ],
            *overlap_rows(s),
            ["launch API calls (host)", ms(s.get("launch_api_ms_per_step"))],
            ["host time (the NVTX step range)", ms(s.get("host_ms_per_step"))],
        ],
        "lr",
    )
    return out + ["", f"Verdict: {bound}.", ""]


def _kernels(ctx: Context) -> list[str]:
    """The kernels on the timeline (median, min, max per launch), with ncu's replayed time where both ran."""
    ncu = {k.kernel: k.duration_ms for k in ctx.analysis.kernels}
    kernels = list(ctx.report.timeline.kernels.itertuples(index=False))
    with_ncu = not ctx.timeline_only and any(ncu.get(k.kernel) is not None for k in kernels)
    rows = [
        [
            code(k.kernel),
            str(int(k.launches)),
            ms(known(k.median_ms)),
            ms(known(k.min_ms)),
            ms(known(k.max_ms)),
            f"{k.share_pct:.1f}",
        ]
        + ([ms(ncu.get(k.kernel))] if with_ncu else [])
        for k in kernels
    ]
    return details(
        "Kernels on the timeline (median, min, max per launch, ms)",
        table(
            ["kernel", "launches", "median", "min", "max", "% of kernel time"]
            + (["ncu (replayed)"] if with_ncu else []),
            rows,
            "lrrrrr" + ("r" if with_ncu else ""),
        ),
    )


def overlap_rows(s: dict) -> list[list[str]]:
    """The launches' own times summed, where they overlap (a programmatic dependent launch, two streams) and so
    sum to more than the kernel time above."""
    summed = overlapping_launch_ms(s)
    return [] if summed is None else [["the launches' own times summed (they overlap)", ms(summed)]]
