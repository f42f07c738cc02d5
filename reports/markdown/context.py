"""What a report renders (`ReportInput`: the analysis, its nsys timeline and timing pass) and what every section takes
(`Context`: that input, the `ReportMeta` and the chart links)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from profiler.nsys_reader import Timeline
from profiler.timing import TimingSamples
from reports.meta import ReportMeta
from roofline.analysis.pm_sampling import PmLaunch
from roofline.analysis.summary import Analysis
from roofline.analysis.timeline import InKernelTimeline


@dataclass(frozen=True)
class ReportInput:
    """What a report renders: the analysis and, when the run has them, its nsys timeline, its in-kernel
    timeline, its timing pass and its PM sampling (the rest of what it shows, commands, versions and roofs, is the `ReportMeta`)."""

    analysis: Analysis
    timeline: Timeline | None = None
    in_kernel: InKernelTimeline | None = None  # the in-kernel timeline, where the run has one
    timing: TimingSamples | None = None
    pm_samples: pd.DataFrame | None = None  # ncu's PM sampling series (profiler/ncu_pm.py), where the report has them
    pm_sampling: list[PmLaunch] = field(default_factory=list)  # their summary: each kernel's first launch


@dataclass(frozen=True)
class Context:
    """One report's sections all render from this: the input, its meta, and the charts written beside it
    ('roofline'/'stalls'/'timeline'/'waits' -> PNG path relative to the markdown)."""

    report: ReportInput
    meta: ReportMeta
    charts: dict[str, Path] = field(default_factory=dict)

    @property
    def analysis(self) -> Analysis:
        return self.report.analysis

    @property
    def timeline_only(self) -> bool:
        """The kernels came from an nsys timeline alone: no counter, no bound."""
        ks = self.report.analysis.kernels
        return (
            self.report.timeline is not None
            and bool(ks)
            and all(k.bound == "unknown" and k.sm_throughput_pct is None for k in ks)
        )
