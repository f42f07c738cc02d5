"""A launch's lifetime from ncu's PM sampling (profiler/ncu_pm.py's series): how long DRAM takes to reach its
steady level, the steady levels of the memory and compute units, when the DRAM stream ends, and the tail where
fewer than half the SMs are active. For kernels whose source carries no stamps (FlashMLA, vendor kernels)
this is the view inside the launch; where the in-kernel timeline exists, that stays the primary one.

Everything here is read off the samples (one per interval, 1.5 us on the H200), so every time is good to one
interval: a phase shorter than that is not seen. "Busy" samples are those with at least half the SMs active
(SMs_BUSY); the steady levels are the medians over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from profiler.ncu_pm import SMS_ACTIVE, STALL

SMS_BUSY = 50.0  # % of SMs active: a sample at or above it is part of the body, below it after the body is the tail
RAMP = 0.8  # DRAM has ramped up once a sample reaches this share of its steady level
DRAM_END = 0.5  # the DRAM stream has ended after the last sample at this share of its steady level or more
DRAM_MIN = 5.0  # % of peak: below this steady level the kernel does not stream from DRAM (no ramp, no end)
TOP_STALLS = 3
LEVELS = ("dram %", "L2 %", "L1/shared %", "tensor pipe %", "issue %", SMS_ACTIVE)


@dataclass(frozen=True)
class PmLaunch:
    """One launch's lifetime from its PM samples. Times in µs from the launch's start; None where the samples
    do not say (no busy sample, no DRAM stream). `window_us`: the kernel's window in its sampling pass (None:
    the report gives none and the window is the sampler's, from its first sample). `steady`: series -> its
    median over the busy samples; `tail_levels`: the same over the tail's samples. `stalls` / `tail_stalls`:
    the top warp states over the body / the tail, (reason, warps per SM sub-partition on average)."""

    kernel: str
    launch: int
    interval_us: float
    samples: int
    window_us: float | None
    span_us: float  # the time the samples cover: the window, or the sampler's span
    busy_share: float  # of the span, in samples with at least half the SMs active
    steady: dict[str, float] = field(default_factory=dict)
    dram_peak: float | None = None
    ramp_us: float | None = None  # the end of the first interval with DRAM at RAMP of its steady level
    dram_end_us: float | None = None  # the end of the last interval with DRAM at DRAM_END of its steady level
    body_end_us: float | None = None  # the end of the last busy interval
    tail_us: float = 0.0  # from body_end_us to the span's end
    tail_levels: dict[str, float] = field(default_factory=dict)
    stalls: list[tuple[str, float]] = field(default_factory=list)
    tail_stalls: list[tuple[str, float]] = field(default_factory=list)
    warp_states: bool = False  # the report holds warp-state series (ncu section PmSampling_WarpStates)

    @property
    def tail_share(self) -> float:
        return self.tail_us / self.span_us if self.span_us > 0 else 0.0

    @property
    def after_dram_us(self) -> float | None:
        """The time the launch runs after its DRAM stream ends."""
        return None if self.dram_end_us is None else max(0.0, self.span_us - self.dram_end_us)


def _series(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    return frame[frame["series"] == name].sort_values("time_us")


def stall_means(frame: pd.DataFrame) -> pd.Series:
    """Each warp-state series' mean over `frame`'s samples (warps per SMSP), largest first; empty without any."""
    stalls = frame[frame["series"].str.startswith(STALL)]
    return stalls.groupby("series")["value"].mean().sort_values(ascending=False)


def _stalls(frame: pd.DataFrame, start: float, end: float) -> list[tuple[str, float]]:
    """The top warp states among the samples starting in [start, end): (reason, mean warps per SMSP)."""
    means = stall_means(frame[(frame["time_us"] >= start) & (frame["time_us"] < end)])
    return [(name.removeprefix(STALL), float(v)) for name, v in means.head(TOP_STALLS).items() if v > 0]


def _levels(frame: pd.DataFrame, times: pd.Series) -> dict[str, float]:
    """series -> median over the throughput samples at `times`."""
    got = frame[frame["time_us"].isin(times) & frame["series"].isin(LEVELS)]
    return {str(k): float(v) for k, v in got.groupby("series")["value"].median().items()}


def _dram_phases(frame: pd.DataFrame, steady: float | None, interval: float):
    """(peak, ramp end, stream end) of DRAM throughput; the times None without a DRAM stream."""
    dram = _series(frame, "dram %")
    if dram.empty:
        return None, None, None
    peak = float(dram["value"].max())
    if steady is None or steady < DRAM_MIN:
        return peak, None, None
    up = dram[dram["value"] >= RAMP * steady]
    on = dram[dram["value"] >= DRAM_END * steady]
    ramp = float(up["time_us"].iloc[0]) + interval if not up.empty else None
    end = float(on["time_us"].iloc[-1]) + interval if not on.empty else None
    return peak, ramp, end


def summarize_launch(frame: pd.DataFrame) -> PmLaunch | None:
    """The lifetime of the one launch in `frame` (its PM rows); None without an "SMs active %" series."""
    sms = _series(frame, SMS_ACTIVE)
    if sms.empty:
        return None
    interval = float(sms["interval_us"].iloc[0])
    window = sms["window_us"].iloc[0]
    window = None if pd.isna(window) else float(window)
    span = window if window is not None else float(sms["time_us"].iloc[-1]) + interval
    busy = sms[sms["value"] >= SMS_BUSY]
    steady = _levels(frame, busy["time_us"]) if not busy.empty else {}
    body_end = min(span, float(busy["time_us"].iloc[-1]) + interval) if not busy.empty else None
    body_start = float(busy["time_us"].iloc[0]) if not busy.empty else 0.0
    tail_start = body_end if body_end is not None else 0.0
    tail = sms[sms["time_us"] >= tail_start]
    peak, ramp, dram_end = _dram_phases(frame, steady.get("dram %"), interval)
    return PmLaunch(
        kernel=str(sms["kernel"].iloc[0]),
        launch=int(sms["launch"].iloc[0]),
        interval_us=interval,
        samples=len(sms),
        window_us=window,
        span_us=span,
        busy_share=min(1.0, len(busy) * interval / span) if span > 0 else 0.0,
        steady=steady,
        dram_peak=peak,
        ramp_us=ramp,
        dram_end_us=min(span, dram_end) if dram_end is not None else None,
        body_end_us=body_end,
        tail_us=max(0.0, span - tail_start),
        tail_levels=_levels(frame, tail["time_us"]) if not tail.empty else {},
        stalls=_stalls(frame, body_start, tail_start) if body_end is not None else [],
        tail_stalls=_stalls(frame, tail_start, span + interval),
        warp_states=bool(frame["series"].str.startswith(STALL).any()),
    )


def summarize_pm(frame: pd.DataFrame | None) -> list[PmLaunch]:
    """The first launch of each kernel that has PM samples, in launch order; [] for None or no samples."""
    if frame is None or frame.empty:
        return []
    firsts = frame.groupby("kernel", sort=False)["launch"].min().sort_values()
    out = [summarize_launch(frame[frame["launch"] == launch]) for launch in firsts]
    return [s for s in out if s is not None]
