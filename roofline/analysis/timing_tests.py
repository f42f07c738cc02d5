"""The step's timing samples of two runs, tested: between runs on the rounds' medians when both runs
have MIN_ROUNDS rounds (each round its own process: profiler/timing.py), else within the runs on the
pooled samples, said to be within-run only (roofline/analysis/stats.py holds the statistics)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from profiler.timing import TimingSamples
from roofline.analysis.stats import mann_whitney_u, median_ratio_ci, welch_rounds

MIN_SAMPLES = 10  # per side, for the U test and the interval to mean anything
MIN_ROUNDS = 3  # per side, for the between-run test (Welch's t on the rounds' medians)
WITHIN_RUN = "within-run only: the samples of a run share one process; a shift between runs is not covered"


@dataclass
class SampleTest:
    """One timing compared by its samples: the ratio head / base, its 95% interval and the test's p-value
    (None with fewer than MIN_SAMPLES a side); `test` and `covers` say which test and what it holds."""

    base_median_ms: float
    head_median_ms: float
    ratio: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_base: int
    n_head: int
    method: str | None = None
    ci_level: float = 0.95
    covers: str = WITHIN_RUN  # what the interval and the p-value hold
    test: str = "Mann-Whitney"  # Mann-Whitney (within-run) | Welch (between rounds)
    rounds: tuple[int, int] | None = None  # rounds a side, for the between-run test

    @property
    def delta_pct(self) -> float:
        return (self.ratio - 1.0) * 100.0

    @property
    def enough(self) -> bool:
        return self.p_value is not None

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["delta_pct"] = self.delta_pct
        d["ci_delta_pct"] = None if self.ci_low is None else [(self.ci_low - 1.0) * 100.0, (self.ci_high - 1.0) * 100.0]
        return d


def sample_test(base, head, method: str | None = None, min_samples: int = MIN_SAMPLES) -> SampleTest:
    """Compare two arrays of timings (ms); the interval and the p-value only with `min_samples` a side."""
    base, head = [float(v) for v in base], [float(v) for v in head]
    ci = median_ratio_ci(base, head)
    if min(len(base), len(head)) < min_samples:
        return SampleTest(
            float(pd.Series(base).median()),
            float(pd.Series(head).median()),
            ci.ratio,
            None,
            None,
            None,
            len(base),
            len(head),
            method,
        )
    return SampleTest(
        float(pd.Series(base).median()),
        float(pd.Series(head).median()),
        ci.ratio,
        ci.low,
        ci.high,
        mann_whitney_u(head, base).p_value,
        len(base),
        len(head),
        method,
        ci.level,
    )


def timing_test(base: TimingSamples, head: TimingSamples) -> SampleTest:
    """The step's test: between runs on the rounds' medians when both sides have MIN_ROUNDS rounds
    (and MIN_SAMPLES samples), else within-run on the pooled samples (sample_test)."""
    nb, nh = len(base.rounds), len(head.rounds)
    if min(nb, nh) < MIN_ROUNDS or min(base.n, head.n) < MIN_SAMPLES:
        within = sample_test(base.samples_ms, head.samples_ms, base.method)
        if max(nb, nh) > 1:
            within.covers = f"{WITHIN_RUN} ({nb} and {nh} rounds: the between-run test needs {MIN_ROUNDS} a side)"
        return within
    t = welch_rounds(base.round_medians(), head.round_medians())
    return SampleTest(
        float(pd.Series(base.samples_ms).median()),
        float(pd.Series(head.samples_ms).median()),
        t.ratio,
        t.low,
        t.high,
        t.p_value,
        base.n,
        head.n,
        base.method,
        t.level,
        covers=(
            f"between runs: the spread of {nb} + {nh} rounds' medians, each round its own process "
            "(Welch's t on their logs; the ratio is of their geometric means)"
        ),
        test="Welch",
        rounds=(nb, nh),
    )


__all__ = ["MIN_ROUNDS", "MIN_SAMPLES", "WITHIN_RUN", "SampleTest", "sample_test", "timing_test"]
