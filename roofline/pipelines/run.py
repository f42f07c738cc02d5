"""The `Run`: captured evidence, parsed and analysed, from a run directory, a report or a folder of
reports (`load`) or from a capture just made (`profile`); its tables are the user's view (pandas)."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kernels.spec import VerifyWorkload
from profiler.launch_table import LaunchTable, PcSamples
from profiler.nsys_reader import Timeline
from profiler.rundir import Manifest, RunSpec
from profiler.timing import TimingSamples
from roofline.analysis.clocks import run_clock_note
from roofline.analysis.comparison import run_timing
from roofline.analysis.floor import Step
from roofline.analysis.pm_sampling import PmLaunch, summarize_pm
from roofline.analysis.summary import Analysis
from roofline.analysis.timeline import InKernelTimeline
from roofline.analysis.useful import UsefulWork
from roofline.analysis.waits import stalls_by_class, stalls_by_line

KERNEL_COLUMNS = [
    "kernel",
    "label",
    "source",
    "launches",
    "duration_ms",
    "grid_size",
    "block_size",
    "dram_gbps",
    "dram_throughput_pct",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "l2_hit_rate_pct",
    "waves_per_sm",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "registers_per_thread",
    "bound",
    "cause",
    "roof",
    "unit",
    "advice",
]


@dataclass
class Run:
    """Captured evidence, parsed and analysed: from a run directory, a report, or a folder of them."""

    source: Path
    launch_table: LaunchTable  # the launches and what the reader knows of them (units, rules, notes, cut)
    analysis: Analysis
    spec: RunSpec | None = None
    workload: VerifyWorkload | None = None
    manifest: Manifest | None = None
    complete: bool = True
    problems: list[str] = field(default_factory=list)
    timeline: Timeline | None = None  # the nsys timeline, when the run or file has one
    pc_samples: pd.DataFrame | None = None  # per-PC stall samples (profiler/ncu_source.py), when read
    removal: Path | None = None  # the removal experiment that named a kernel's cause (load(removal=...))
    useful: UsefulWork | None = None  # the user's useful work of a foreign capture (load(useful=...))
    in_kernel: InKernelTimeline | None = None  # `profile --in-kernel`'s timeline, when the run has one
    pm_sampling: list[PmLaunch] = field(default_factory=list)  # ncu's PM sampling: each kernel's first launch

    @property
    def pm_samples(self) -> pd.DataFrame | None:
        """ncu's PM sampling series (profiler/ncu_pm.py COLUMNS), when the report holds them."""
        return self.launch_table.pm_samples

    @property
    def launches(self) -> pd.DataFrame:
        """One row per launch: kernel, time, metrics (units in the column names), source file."""
        return self.launch_table.frame

    @property
    def stalls_by_class(self) -> pd.DataFrame:
        """Where the warps wait, by wait class: kernel, wait_class, samples, share (of the kernel's)."""
        return stalls_by_class(self.pc_samples if self.pc_samples is not None else pd.DataFrame())

    @property
    def stalls_by_line(self) -> pd.DataFrame:
        """Where the warps wait, by source line (per PC without line info), most samples first."""
        return stalls_by_line(self.pc_samples if self.pc_samples is not None else pd.DataFrame())

    @property
    def kernels(self) -> pd.DataFrame:
        """One row per kernel (and launch configuration): time, metrics, bound, cause, roof, advice."""
        rows = [
            {
                **{c: getattr(k, c, None) for c in KERNEL_COLUMNS},
                "top_stalls": ", ".join(s["reason"] for s in k.top_stalls),
            }
            for k in self.analysis.kernels
        ]
        return pd.DataFrame(rows, columns=KERNEL_COLUMNS + ["top_stalls"])

    @property
    def step(self) -> Step | None:
        return self.analysis.step

    @property
    def timing(self) -> TimingSamples | None:
        """The run's timing pass (timing.json, checked against its manifest): what `compare` tests."""
        return run_timing(self)

    def to_dict(self) -> dict:
        out = self.analysis.to_dict()
        out["source"] = str(self.source)
        out["complete"] = self.complete
        if self.problems:
            out["problems"] = list(self.problems)
        if self.timeline is not None:
            out["timeline"] = self.timeline.to_dict()
        if self.spec is not None:
            out["spec"] = self.spec.to_dict()
        if (timing := self.timing) is not None:
            out["timing"] = {"median_ms": statistics.median(timing.samples_ms), **timing.to_dict()}
        if self.manifest is not None:
            m = self.manifest
            out["manifest"] = {
                "status": m.status,
                "created": m.created,
                "tools": m.tools,
                "host": m.host,
                "commands": m.commands,
                "wall_s": m.wall_s,
                "reports": [dataclasses.asdict(r) for r in m.reports],
            }
        return out


def passes_note(manifest: Manifest | None) -> str | None:
    """What the run's ncu capture cost, from its manifest: preset and replay passes per launch."""
    if manifest is None:
        return None
    said = [
        f"{e.path}: preset {e.preset or 'unknown'}, {e.passes} replay passes per launch"
        for e in manifest.reports
        if e.tool == "ncu" and e.passes
    ]
    return "ncu captured " + "; ".join(said) if said else None


def make_run(
    source: Path,
    launches: LaunchTable,
    analysis: Analysis,
    notes: list[str],
    problems: list[str],
    pc_samples: PcSamples | None = None,
    **evidence,
) -> Run:
    """The Run of `analysis` (summarize's) with `notes` and what the launch table lacks added to its notes:
    the incomplete capture's problems, the counters of a timeline. `evidence`: Run's spec, workload,
    manifest and timeline."""
    notes = list(notes)
    if clocks := run_clock_note(source, evidence.get("manifest"), launches.frame):
        notes.append(clocks)
    if problems:
        notes.append("INCOMPLETE: " + "; ".join(problems) + " (no step time)")
    if not launches.counters:
        notes.append(
            "launch times from the nsys timeline, no hardware counters: no bound or cause "
            "(profile with --tool ncu or both for them)"
        )
    return Run(
        source=source,
        launch_table=launches,
        analysis=dataclasses.replace(analysis, notes=[*analysis.notes, *notes]),
        complete=not problems,
        problems=problems,
        pc_samples=pc_samples.frame if pc_samples is not None else None,
        pm_sampling=summarize_pm(launches.pm_samples),
        **evidence,
    )
