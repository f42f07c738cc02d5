"""`load`: read captured evidence without a GPU into a `Run`: a run directory (the reports its manifest
names, checked against their checksums), a report file (by content: ncu, nsys-rep, sqlite, CSV), or a
folder of reports; the bundled sample when given no path."""

from __future__ import annotations

import dataclasses
from importlib import resources
from pathlib import Path

import pandas as pd

from kernels.spec import VerifyWorkload, WorkloadError
from profiler.errors import ReportError, refuse_special
from profiler.nsys_reader import read_nsys_sqlite
from profiler.readers import NSYS_REP, NSYS_SQLITE, read_folder, read_launches, sniff
from profiler.rundir import RunDir, RunDirError, RunSpec
from roofline.analysis.removal import apply_removal
from roofline.analysis.summary import summarize
from roofline.analysis.useful import UsefulWork
from roofline.pipelines.capture import IncompleteRun, completeness, timeline_table
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


def load(
    path: str | Path | None = None,
    allow_incomplete: bool = False,
    gpu=None,
    removal: str | Path | None = None,
    useful: UsefulWork | None = None,
) -> Run:
    """roofline.api.load: the Run of `path` (its docstring says what each argument does)."""
    source = Path(path) if path is not None else sample_run()
    if not source.exists():
        raise ReportError(f"{source}: no such run directory or report")
    refuse_special(source)
    spec = manifest = timeline = None
    expected = None
    warnings: list[str] = []
    pc_samples = pc_note = None  # the PC samples of one Nsight Compute report, read with its launches
    if source.is_dir() and RunDir.is_run(source):
        run_dir = RunDir(source)
        manifest = run_dir.manifest()
        reports = run_dir.reports(tool="ncu")
        sqlite = run_dir.reports(tool="nsys-sqlite")
        if not reports and not sqlite:
            raise RunDirError(f"{source}: the manifest names no Nsight Compute report and no nsys sqlite export")
        spec = run_dir.spec()
        warnings = run_dir.warnings()
        own = run_dir.reports(tool="removal")  # `profile --why`'s experiment: the run's own evidence
        removal = removal if removal is not None else (own[0] if own else None)
        timeline = read_nsys_sqlite(sqlite[0]) if sqlite else None
        if reports:
            tables = [read_launches(p) for p in reports]
            launches = tables[0]
            if len(tables) == 1:
                pc_samples, pc_note = launches.pc_samples, launches.pc_note
            if len(tables) > 1:  # launch numbers repeat across the reports: no rule results
                launches = dataclasses.replace(
                    tables[0], frame=pd.concat([t.frame for t in tables], ignore_index=True), rules={}
                )
            counts = [e.launches for e in manifest.reports if e.tool == "ncu"]
            expected = sum(counts) if all(c is not None for c in counts) else None
        else:  # an nsys-only run: the timeline's launches, no counters
            launches = timeline_table(timeline, sqlite[0])
    elif source.is_dir():
        launches = read_folder(source)
        pc_samples = launches.pc_samples
        timeline, said = folder_timeline(source, launches)  # nsys beside ncu: the same program's, or none
        warnings += said
    elif sniff(source) in (NSYS_REP, NSYS_SQLITE):  # by content: a foreign SQLite file gets its own message
        timeline = read_nsys_sqlite(source)
        launches = timeline_table(timeline, source)
    else:
        launches = read_launches(source)
        pc_samples, pc_note = launches.pc_samples, launches.pc_note
    workload = _workload(spec, source)
    if useful is not None and workload is not None:
        raise WorkloadError(
            f"{source}: the run names its workload, whose FLOPs and bytes are the useful work; "
            "--useful-flops and --useful-bytes are for captures without one"
        )
    iterations = spec.iterations if spec else None
    problems = completeness(launches, iterations, expected)
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
        pc_samples=pc_samples,
        useful=useful,
    )
    if removal is not None:
        apply_removal(analysis, removal)
    if lines_note := source_lines_note(analysis, manifest):
        warnings.append(lines_note)
    passes = passes_note(manifest)
    return make_run(
        source,
        launches,
        analysis,
        warnings + ([pc_note] if pc_note else []) + ([passes] if passes else []),
        problems,
        spec=spec,
        workload=workload,
        manifest=manifest,
        timeline=timeline,
        pc_samples=pc_samples,
        removal=Path(removal) if removal is not None else None,
        useful=useful,
    )
