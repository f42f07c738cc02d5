"""`load`: read captured evidence without a GPU into a `Run`: a run directory (the reports its manifest
names, checked against their checksums), a report file (by content: ncu, nsys-rep, sqlite, CSV), or a
folder of reports; the bundled sample when given no path."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from kernels.spec import VerifyWorkload, WorkloadError
from profiler.errors import ReportError, refuse_special
from profiler.launch_table import LaunchTable, PcSamples
from profiler.nsys_reader import Timeline, read_nsys_sqlite
from profiler.readers import NSYS_REP, NSYS_SQLITE, read_folder, read_launches, sniff
from profiler.rundir import Manifest, RunDir, RunDirError, RunSpec
from roofline.analysis.removal import apply_removal
from roofline.analysis.summary import summarize
from roofline.analysis.useful import UsefulWork
from roofline.pipelines.capture import IncompleteRun, completeness, timeline_table
from roofline.pipelines.in_kernel import load_in_kernel
from roofline.pipelines.loading_folder import folder_timeline
from roofline.pipelines.run import Run, make_run, passes_note
from roofline.pipelines.source_lines import source_lines_note

SAMPLE_RUN = "data/samples/h200-triton_mla-128k"


def sample_run() -> Path:
    """The bundled H200 capture (triton_mla at 128k) that `roofline analyze` reads when given no path."""
    return Path(str(resources.files("roofline").joinpath(SAMPLE_RUN)))


def _workload(spec: RunSpec | None, where: Path) -> VerifyWorkload | None:
    """The run's verify workload; None for a report without a spec and for a probe's run (workload {})."""
    if spec is None or not spec.workload:
        return None
    try:
        return VerifyWorkload.from_dict(spec.workload)
    except WorkloadError as exc:
        raise RunDirError(f"{where}: workload: {exc}") from None


@dataclass
class _Evidence:
    """What one path holds: its launch table and, where it has them, the run's spec and manifest, its nsys
    timeline, the launches its manifest expects, the PC samples, the run's own removal experiment."""

    launches: LaunchTable
    spec: RunSpec | None = None
    manifest: Manifest | None = None
    timeline: Timeline | None = None
    expected: int | None = None
    warnings: list[str] = field(default_factory=list)
    pc_samples: PcSamples | None = None  # the PC samples of one Nsight Compute report, read with its launches
    pc_note: str | None = None
    removal: str | Path | None = None
    plan: dict | None = None  # the launch plan the harness recorded, if any


def _read_run_dir(source: Path) -> _Evidence:
    """A run directory: the reports its manifest names (several ncu reports: one table, no rule results), else
    its nsys timeline's launches."""
    run_dir = RunDir(source)
    manifest = run_dir.manifest()
    reports = run_dir.reports(tool="ncu")
    sqlite = run_dir.reports(tool="nsys-sqlite")
    if not reports and not sqlite:
        raise RunDirError(f"{source}: the manifest names no Nsight Compute report and no nsys sqlite export")
    spec = run_dir.spec()
    warnings = run_dir.warnings()
    own = run_dir.reports(tool="removal")  # `profile --why`'s experiment: the run's own evidence
    timeline = read_nsys_sqlite(sqlite[0]) if sqlite else None
    found = _Evidence(
        None, spec, manifest, timeline, warnings=warnings, removal=own[0] if own else None, plan=run_dir.plan()
    )
    if not reports:  # an nsys-only run: the timeline's launches, no counters
        found.launches = timeline_table(timeline, sqlite[0])
        return found
    tables = [read_launches(p) for p in reports]
    found.launches = tables[0]
    if len(tables) == 1:
        found.pc_samples, found.pc_note = found.launches.pc_samples, found.launches.pc_note
    if len(tables) > 1:  # launch numbers repeat across the reports: no rule results
        found.launches = dataclasses.replace(
            tables[0], frame=pd.concat([t.frame for t in tables], ignore_index=True), rules={}
        )
    counts = [e.launches for e in manifest.reports if e.tool == "ncu"]
    found.expected = sum(counts) if all(c is not None for c in counts) else None
    return found


def _read(source: Path) -> _Evidence:
    """The evidence at `source`: a run directory, a folder of reports, an nsys report or export, or one report."""
    if source.is_dir() and RunDir.is_run(source):
        return _read_run_dir(source)
    if source.is_dir():
        launches = read_folder(source)
        timeline, said = folder_timeline(source, launches)  # nsys beside ncu: the same program's, or none
        return _Evidence(launches, timeline=timeline, warnings=said, pc_samples=launches.pc_samples)
    if sniff(source) in (NSYS_REP, NSYS_SQLITE):  # by content: a foreign SQLite file gets its own message
        timeline = read_nsys_sqlite(source)
        return _Evidence(timeline_table(timeline, source), timeline=timeline)
    launches = read_launches(source)
    return _Evidence(launches, pc_samples=launches.pc_samples, pc_note=launches.pc_note)


def load(
    path: str | Path | None = None,
    allow_incomplete: bool = False,
    gpu=None,
    removal: str | Path | None = None,
    useful: UsefulWork | None = None,
) -> Run:
    """Read captured evidence without a GPU: a run directory (only the reports its manifest names,
    checked against their checksums), a report file, or a folder of reports. None: the bundled sample.
    `removal`: a removal experiment of the same GPU and workload, or a folder of them (roofline/analysis/removal.py),
    whose result names the timed kernel's cause (a run profiled with `why` carries its own).
    `useful`: the useful work of one step of a capture without a workload (UsefulWork(flops, bytes)):
    executed against useful, and the padding it shows, for a foreign kernel too. roofline.load is this function."""
    source = Path(path) if path is not None else sample_run()
    if not source.exists():
        raise ReportError(f"{source}: no such run directory or report")
    refuse_special(source)
    found = _read(source)
    spec, manifest, launches = found.spec, found.manifest, found.launches
    removal = removal if removal is not None else found.removal
    workload = _workload(spec, source)
    if useful is not None and workload is not None:
        raise WorkloadError(
            f"{source}: the run names its workload, whose FLOPs and bytes are the useful work; "
            "--useful-flops and --useful-bytes are for captures without one"
        )
    iterations = spec.iterations if spec else None
    problems = completeness(launches, iterations, found.expected)
    if problems and not allow_incomplete:
        raise IncompleteRun(
            f"{source}: incomplete capture: {'; '.join(problems)} "
            "(pass --allow-incomplete to analyze it anyway, marked incomplete)"
        )
    presets = {e.preset for e in manifest.reports if e.tool == "ncu"} if manifest is not None else set()
    analysis = summarize(
        launches,
        workload,
        None if problems else iterations,
        gpu=gpu,
        preset=next(iter(presets)) if len(presets) == 1 else None,
        pc_samples=found.pc_samples,
        useful=useful,
        plan=found.plan,
    )
    if removal is not None:
        apply_removal(analysis, removal)
    in_kernel = load_in_kernel(source, analysis) if manifest is not None else None
    if lines_note := source_lines_note(analysis, manifest):
        found.warnings.append(lines_note)
    passes = passes_note(manifest)
    return make_run(
        source,
        launches,
        analysis,
        found.warnings + ([found.pc_note] if found.pc_note else []) + ([passes] if passes else []),
        problems,
        spec=spec,
        workload=workload,
        manifest=manifest,
        timeline=found.timeline,
        pc_samples=found.pc_samples,
        removal=Path(removal) if removal is not None else None,
        useful=useful,
        in_kernel=in_kernel,
    )
