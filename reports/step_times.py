"""Which time of one step is which: a run holds several, each measured another way, and they differ by a
little (15.51, 15.53, 15.48 ms on the bundled sample). The headline step (the capture's launch times per step:
ncu replays each launch, so they sum; on a timeline, launches that overlap count once), a lone kernel's median
launch (the kernel table), nsys's step (no replay), and the timing pass (timing.json: no profiler attached, in
rounds; what `roofline compare` tests)."""

from __future__ import annotations

import statistics
import textwrap
from dataclasses import dataclass

from profiler.nsys_reader import Timeline
from profiler.timing import METHODS, TimingSamples
from reports.numbers import ms
from roofline.analysis.summary import Analysis


@dataclass(frozen=True)
class StepTime:
    ms: float
    what: str  # what the time is, and where the report shows it


def timing_said(t: TimingSamples) -> str:
    """The timing pass in words: its samples, rounds and method."""
    rounds = t.round_medians()
    mid = statistics.median(rounds)
    spread = f" (their medians within {100 * (max(rounds) - min(rounds)) / mid:.2f}%)" if len(rounds) > 1 else ""
    return (
        f"the timing pass (timing.json): median of {t.n} samples in {len(rounds)} "
        f"round{'s' if len(rounds) != 1 else ''}{spread}, no profiler attached, "
        f"{METHODS.get(t.method, t.method)}: what `roofline compare` tests"
    )


def step_times(analysis: Analysis, timeline: Timeline | None, timing: TimingSamples | None) -> list[StepTime]:
    """Every time of one step the run holds, each said for what it is (empty when there is one or none)."""
    out = []
    counters = any(k.sm_throughput_pct is not None or k.dram_throughput_pct is not None for k in analysis.kernels)
    what = (
        "step: ncu's launch times (each launch replayed) summed per step (the headline)"
        if counters
        else "step: the capture's kernel time per step, launches that overlap counted once (the headline)"
    )
    if analysis.step is not None:
        out.append(StepTime(analysis.step.kernel_ms_per_step, what))
    timed = [k for k in analysis.kernels if k.duration_ms is not None]
    if len(timed) == 1 and counters:
        k = timed[0]
        out.append(StepTime(k.duration_ms, f"{k.label or k.kernel}: its median launch under ncu (the kernel table)"))
    s = timeline.summary if timeline is not None else {}
    if s.get("kernel_ms_per_step") is not None:
        n = s["steps"] - s.get("steps_without_kernels", 0)
        out.append(StepTime(s["kernel_ms_per_step"], f"nsys: the kernels' time per step, median of {n} (no replay)"))
    if timing is not None and timing.n:
        out.append(StepTime(statistics.median(timing.samples_ms), timing_said(timing)))
    return out if len(out) > 1 else []


def step_times_text(times: list[StepTime]) -> list[str]:
    if not times:
        return []
    width = max(len(ms(t.ms)) for t in times)
    out = ["times of one step, which is which:"]
    for t in times:
        out += textwrap.wrap(f"{ms(t.ms):>{width}} ms  {t.what}", 100, initial_indent="  ", subsequent_indent="    ")
    return out
