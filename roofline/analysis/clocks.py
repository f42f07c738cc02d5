"""At what clock was it measured: the GPU's clocks over a run's timing rounds (or a bench's rows), the
rounds that throttled, and the clock ncu's counters were taken at (its clock control, from the run's
ncu command: `base`, ncu's default, locks the clocks at base; `none` leaves the GPU its own clock).
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from profiler.clocks import ClockRecord
from profiler.rundir import Manifest, RunDirError
from profiler.timing import TimingSamples, read_timing

NCU_DEFAULT_CLOCK_CONTROL = "base"  # what ncu does when its command line does not say
CONTROLS = {
    "base": "the clocks locked at the GPU's base clock",
    "none": "the GPU's own clock, as the timing pass",
}


@dataclass(frozen=True)
class ClockSummary:
    """The GPU's clocks over a set of timed stretches (a run's timing rounds): the range of each reading
    over every stretch's start and end, and the stretches that throttled."""

    stretches: int
    recorded: int  # stretches with NVML readings
    sm_mhz: tuple[float, float] | None = None  # (lowest, highest)
    mem_mhz: tuple[float, float] | None = None
    power_w: tuple[float, float] | None = None
    temp_c: tuple[float, float] | None = None
    sm_max_mhz: float | None = None  # the GPU's highest SM clock, as NVML reports it
    throttled: list[tuple[int, list[str]]] = field(default_factory=list)  # (stretch from 1, why)
    why: str | None = None  # why no stretch has readings

    def to_dict(self) -> dict:
        d = asdict(self)
        d["throttled"] = [{"round": i, "why": why} for i, why in self.throttled]
        return d

    def describe(self, unit: str = "round") -> str:
        """One line: the readings' ranges, then which stretches throttled ("none throttled" when none did)."""
        if not self.recorded:
            return f"not recorded ({self.why})" if self.why else "not recorded"
        parts = [
            f"SM {_span(self.sm_mhz)} MHz" + (f" (max {self.sm_max_mhz:.0f})" if self.sm_max_mhz else "")
            if self.sm_mhz
            else None,
            f"memory {_span(self.mem_mhz)} MHz" if self.mem_mhz else None,
            f"{_span(self.power_w)} W" if self.power_w else None,
            f"{_span(self.temp_c)} °C" if self.temp_c else None,
        ]
        said = ", ".join(p for p in parts if p) or "no readings"
        plural = unit + ("s" if self.stretches != 1 else "")
        said += f" over {self.stretches} {plural}" + (
            f" ({self.recorded} with readings)" if self.recorded < self.stretches else ""
        )
        if not self.throttled:
            return said + ", none throttled"
        which = "; ".join(f"{unit} {i}: {', '.join(why)}" for i, why in self.throttled)
        return said + f"; THROTTLED: {which}"


def _span(pair: tuple[float, float]) -> str:
    lo, hi = pair
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}"


def _range(values: list) -> tuple[float, float] | None:
    got = [float(v) for v in values if v is not None]
    return (min(got), max(got)) if got else None


def summarize_clocks(records: list[ClockRecord]) -> ClockSummary:
    """The summary of one clock record per stretch (in order)."""
    samples = [s for r in records for s in r.samples()]
    whys = {r.why for r in records if not r.available and r.why}
    maxes = [s.sm_max_mhz for s in samples if s.sm_max_mhz]
    return ClockSummary(
        stretches=len(records),
        recorded=sum(r.available for r in records),
        sm_mhz=_range([s.sm_mhz for s in samples]),
        mem_mhz=_range([s.mem_mhz for s in samples]),
        power_w=_range([s.power_w for s in samples]),
        temp_c=_range([s.temp_c for s in samples]),
        sm_max_mhz=max(maxes) if maxes else None,
        throttled=[(i, r.throttled) for i, r in enumerate(records, 1) if r.throttled],
        why="; ".join(sorted(whys)) or None,
    )


def timing_clocks(timing: TimingSamples) -> ClockSummary:
    """The clocks of a timing pass's rounds (format 2 and older: not recorded)."""
    return summarize_clocks(timing.round_clocks())


def compare_clocks(
    base: TimingSamples | None, head: TimingSamples | None
) -> tuple[dict[str, ClockSummary | None] | None, list[str]]:
    """compare's record of each side's timing-pass clocks ({"base": ..., "head": ...}, None for a side without
    a timing pass; None when neither has one) and a note for each side that throttled."""
    if base is None and head is None:
        return None, []
    sides = {side: timing_clocks(t) if t is not None else None for side, t in (("base", base), ("head", head))}
    notes = [
        f"THROTTLED: the {side}'s timing pass ran below the GPU's own clock in "
        + "; ".join(f"round {i} ({', '.join(why)})" for i, why in s.throttled)
        + ": its times are not the GPU's at its own clock"
        for side, s in sides.items()
        if s is not None and s.throttled
    ]
    return sides, notes


def ncu_clock_control(commands: list[str]) -> str | None:
    """The clock control of the run's ncu command (its `--clock-control`, else ncu's default, base);
    None when the run has no ncu command."""
    for line in commands:
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if not words or Path(words[0]).name not in ("ncu", "ncu.exe"):
            continue
        for i, word in enumerate(words):
            if word == "--clock-control" and i + 1 < len(words):
                return words[i + 1]
            if word.startswith("--clock-control="):
                return word.split("=", 1)[1]
        return NCU_DEFAULT_CLOCK_CONTROL
    return None


def ncu_sm_mhz(launches: pd.DataFrame) -> float | None:
    """The SM clock ncu's launches ran at (sm__cycles_elapsed.avg.per_second, median), in MHz."""
    if "sm_cycles_per_second" not in launches.columns:
        return None
    hz = pd.to_numeric(launches["sm_cycles_per_second"], errors="coerce").dropna()
    return float(hz.median()) / 1e6 if len(hz) else None


def clock_note(manifest: Manifest | None, launches: pd.DataFrame, timing: TimingSamples | None) -> str | None:
    """What the run's numbers were measured at: ncu's counters at its clock control (and the SM clock its
    launches report), the timing pass at the GPU's own clock with the clocks its rounds recorded."""
    control = ncu_clock_control(manifest.commands) if manifest is not None else None
    parts = []
    if control is not None:
        mhz = ncu_sm_mhz(launches)
        at = f"; its launches report SM {mhz:.0f} MHz" if mhz else ""
        parts.append(
            f"ncu's counters at ncu's clock control `{control}` ({CONTROLS.get(control, 'as ncu sets it')}{at})"
        )
    if timing is not None:
        parts.append(f"the timing pass at the GPU's own clock: {timing_clocks(timing).describe()}")
    return "clocks: " + "; ".join(parts) if parts else None


def run_clock_note(source: Path, manifest: Manifest | None, launches: pd.DataFrame) -> str | None:
    """clock_note of a run directory: its manifest, its launches and its timing.json (when it names one)."""
    if manifest is None:
        return None
    timing = None
    if any(e.tool == "timing" for e in manifest.reports):
        try:
            timing = read_timing(source)
        except RunDirError as exc:
            return (clock_note(manifest, launches, None) or "clocks:") + f"; the timing pass's clocks unread: {exc}"
    return clock_note(manifest, launches, timing)
