"""ncu's PM sampling as words: a few lines per kernel for `analyze` and the sentences and table of the report's
section (roofline/analysis/pm_sampling.py's PmLaunch, one per kernel)."""

from __future__ import annotations

from reports.numbers import fmt
from roofline.analysis.pm_sampling import DRAM_MIN, PmLaunch


def _pct(levels: dict[str, float], name: str) -> str:
    return fmt(levels.get(name), ".0f", "–", "%")


def window_words(s: PmLaunch) -> str:
    if s.window_us is None:
        return f"{s.span_us:.1f} µs sampled (the sampler's window: the report gives no kernel window)"
    return f"{s.window_us:.1f} µs"


def dram_words(s: PmLaunch) -> str:
    """When DRAM reaches its steady level and when its stream ends, or why there is none."""
    dram = s.steady.get("dram %")
    if dram is None or s.ramp_us is None:
        return f"no DRAM stream (DRAM under {DRAM_MIN:.0f}% of peak while busy)" if s.steady else "no DRAM stream"
    out = f"DRAM reaches its steady {dram:.0f}% (peak {s.dram_peak:.0f}%) by {s.ramp_us:.1f} µs"
    if s.dram_end_us is not None:
        out += f"; its stream ends at {s.dram_end_us:.1f} µs and the launch runs {s.after_dram_us:.1f} µs more"
    return out


def tail_words(s: PmLaunch) -> str:
    """The tail with fewer than half the SMs active, or its absence."""
    if s.body_end_us is None:
        return "the whole launch runs with < half the SMs active"
    if s.tail_us <= 0:
        return "no tail: at least half the SMs active to the end"
    stall = f", mostly {s.tail_stalls[0][0]}" if s.tail_stalls else ""
    return (
        f"tail with < half the SMs active {s.tail_us:.1f} µs ({s.tail_share:.0%} of the launch) at "
        f"{_pct(s.tail_levels, 'SMs active %')} SMs active, DRAM {_pct(s.tail_levels, 'dram %')}{stall}"
    )


def steady_words(s: PmLaunch) -> str:
    """The steady levels (medians over the busy samples)."""
    names = (
        ("dram %", "DRAM"),
        ("L2 %", "L2"),
        ("L1/shared %", "L1"),
        ("tensor pipe %", "tensor"),
        ("issue %", "issue"),
    )
    if not s.steady:  # every sample is the tail: its medians
        levels = ", ".join(f"{short} {_pct(s.tail_levels, name)}" for name, short in names)
        return f"never half the SMs active (median {_pct(s.tail_levels, 'SMs active %')}): {levels}"
    levels = ", ".join(f"{short} {_pct(s.steady, name)}" for name, short in names)
    return f"busy {s.busy_share:.0%} of the launch at {_pct(s.steady, 'SMs active %')} SMs active: {levels}"


def stall_words(stalls: list[tuple[str, float]]) -> str:
    return ", ".join(f"{name} {warps:.2f}" for name, warps in stalls) or "–"


def pm_text(launches: list[PmLaunch]) -> list[str]:
    """The lines `analyze` prints: per kernel, its lifetime; [] without PM samples."""
    if not launches:
        return []
    out = [f"PM sampling (ncu, one sample per {launches[0].interval_us:.1f} µs over each kernel's first launch):"]
    for s in launches:
        out += [
            f"  {s.kernel} ({window_words(s)}, {s.samples} samples):",
            f"    {steady_words(s)}",
            f"    {dram_words(s)}",
            f"    {tail_words(s)}",
        ]
        if s.stalls:
            out.append(f"    stalls while busy (warps per SM sub-partition): {stall_words(s.stalls)}")
        elif not s.warp_states:
            out.append("    no warp-state samples (ncu section PmSampling_WarpStates not collected)")
    return out


def pm_rows(launches: list[PmLaunch]) -> list[list[str]]:
    """The report's table: one row per kernel."""

    def t(v: float | None) -> str:
        return fmt(v, ".1f", "–")

    return [
        [
            s.kernel,
            t(s.span_us),
            t(s.ramp_us),
            _pct(s.steady, "dram %"),
            _pct(s.steady, "L2 %"),
            _pct(s.steady, "tensor pipe %"),
            _pct(s.steady, "issue %"),
            t(s.dram_end_us),
            f"{t(s.tail_us)} ({s.tail_share:.0%})",
            stall_words(s.stalls[:2]),
        ]
        for s in launches
    ]


PM_HEADER = [
    "kernel",
    "µs",
    "DRAM ramp µs",
    "DRAM",
    "L2",
    "tensor",
    "issue",
    "DRAM ends µs",
    "tail µs (share)",
    "top stalls (warps/SMSP)",
]
