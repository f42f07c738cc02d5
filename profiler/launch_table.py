"""The typed results of the readers: a launch table with what it knows about itself, and PC samples.

A reader's DataFrame is the user's view; what travels between modules is one of these, not metadata
in a frame's `attrs` (which pandas calls experimental and deep-copies on every column access).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported here: ncu_reader's prefetch starts before pandas loads
    import pandas as pd


@dataclass(frozen=True)
class LaunchTable:
    """One row per launch (`frame`: raw ncu metric columns from ncu_reader / ncu_csv, tidy columns from
    ncu_tidy and readers) and its metadata.

    `source`: the file (or folder) to name in messages: the user's, never a temporary copy.
    `units`: ncu metric -> base unit (raw tables). `rules`: launch -> ncu rule results (dicts).
    `notes`: what the source could not hold. `missing_metrics`: ncu metrics the analysis reads that
    the report lacks. `cut`: None, or why the capture is incomplete (a report cut short).
    `counters`: False for a timeline's own table (nsys: times, no hardware counters).
    `timelines`: the nsys files beside a folder's ncu reports (read as the timeline, not as launches).
    `pc_samples`: the report's PC samples, read with the launches (ncu_reader's pc_samples=True); `pc_note`:
    why they could not be read (the launches still were).
    `pm_samples`: the report's PM sampling series (profiler/ncu_pm.py COLUMNS: one row per launch, series and
    sample), read with the launches; None when the report holds none.
    """

    frame: pd.DataFrame
    source: str
    units: dict[str, str] = field(default_factory=dict)
    rules: dict[int, list[dict]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    missing_metrics: list[str] = field(default_factory=list)
    cut: str | None = None
    counters: bool = True
    timelines: list[str] = field(default_factory=list)
    pc_samples: PcSamples | None = None
    pc_note: str | None = None
    pm_samples: pd.DataFrame | None = None

    def __len__(self) -> int:
        return len(self.frame)


@dataclass(frozen=True)
class PcSamples:
    """A report's PC samples (profiler/ncu_source.py COLUMNS, one row per sampled PC per launch) and
    `functions`: each sampled kernel -> its SASS traits (mma, async_copies, mbarrier_waits, the MMA paths it
    issues and its first MMA opcode: profiler/ncu_source.py)."""

    frame: pd.DataFrame
    functions: dict[str, dict[str, bool | str]] = field(default_factory=dict)
