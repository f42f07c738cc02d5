"""The public API: every step a user can ask for, as functions. The CLI only parses and prints.

import roofline
run = roofline.load("runs/triton_mla-128k-...")      # run dir, report, or folder of reports
run.kernels                                          # one row per kernel, with bound and cause
run.launches                                         # one row per launch, units in column names
run.launch_table                                     # the same, typed: source, rules, notes, missing metrics
run = roofline.profile(kernel="triton_mla", ctx="128k")   # on a GPU box with ncu
cmp = roofline.compare(base_run_or_path, head_run_or_path, fail_if_slower_pct=5)
cmp.speedup, cmp.passed, cmp.to_dict()               # step, kernels (value, delta %, noise), gate
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from profiler.errors import ProfilerError, ReportError, ToolNotFound, ToolTimeout, refuse_special
from profiler.launch_table import LaunchTable, PcSamples
from profiler.metrics import resolve_preset
from profiler.ncu import find_ncu
from profiler.nsys import find_nsys, importer_missing
from profiler.nsys_reader import Timeline, read_nsys_sqlite
from profiler.readers import NCU_REP, NSYS_REP, NSYS_SQLITE, read_folder, read_launches, sniff
from profiler.rundir import (
    Manifest,
    RunDir,
    RunDirError,
    RunSpec,
    RunWriter,
    default_run_name,
)
from roofline.analysis.comparison import DEFAULT_P_VALUE, CompareError, Comparison  # noqa: F401 (public API)
from roofline.analysis.comparison import compare as compare_runs
from roofline.analysis.floor import Step
from roofline.analysis.removal import apply_removal
from roofline.analysis.summary import Analysis, summarize
from roofline.analysis.waits import stalls_by_class, stalls_by_line
from roofline.catalogue.chips import local_device_name
from roofline.pipelines.capture import (  # IncompleteRun, completeness and pc_samples_of: public here too
    Capture,
    IncompleteRun,
    NcuCapture,
    NsysCapture,
    TimingPass,
    capture_ncu,
    capture_nsys,
    completeness,
    nsys_left_out,
    or_discard,
    pc_samples_of,
    require_complete,
    start_pc_read,
    timeline_table,
    timing_pass,
)
from roofline.pipelines.reporting import report as write_report

SAMPLE_RUN = "data/samples/h200-triton_mla-128k"
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


def sample_run() -> Path:
    """The bundled H200 capture (triton_mla at 128k) that `roofline analyze` reads when given no path."""
    return Path(str(resources.files("roofline").joinpath(SAMPLE_RUN)))


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


def _workload(spec: RunSpec | None, where: Path) -> VerifyWorkload | None:
    """The run's verify workload; None for a report without a spec and for a probe's run (workload {})."""
    if spec is None or not spec.workload:
        return None
    try:
        return VerifyWorkload.from_dict(spec.workload)
    except WorkloadError as exc:
        raise RunDirError(f"{where}: workload: {exc}") from None


def load(
    path: str | Path | None = None, allow_incomplete: bool = False, gpu=None, removal: str | Path | None = None
) -> Run:
    """Read captured evidence without a GPU: a run directory (only the reports its manifest names,
    checked against their checksums), a report file, or a folder of reports. None: the bundled sample.
    `removal`: a removal experiment of the same GPU and workload, or a folder of them (roofline/removal.py),
    whose result names the timed kernel's cause."""
    source = Path(path) if path is not None else sample_run()
    if not source.exists():
        raise ReportError(f"{source}: no such run directory or report")
    refuse_special(source)
    spec = manifest = timeline = None
    expected = None
    warnings: list[str] = []
    pc_read = None  # the PC samples of the run's one Nsight Compute report, read beside its launches
    if source.is_dir() and RunDir.is_run(source):
        run_dir = RunDir(source)
        manifest = run_dir.manifest()
        reports = run_dir.reports(tool="ncu")
        sqlite = run_dir.reports(tool="nsys-sqlite")
        if not reports and not sqlite:
            raise RunDirError(f"{source}: the manifest names no Nsight Compute report and no nsys sqlite export")
        spec = run_dir.spec()
        warnings = run_dir.warnings()
        timeline = read_nsys_sqlite(sqlite[0]) if sqlite else None
        if reports:
            ncu_reports = [p for p in reports if sniff(p) == NCU_REP]
            pc_read = start_pc_read(ncu_reports[0]) if len(ncu_reports) == 1 else None
            tables = or_discard(pc_read, lambda: [read_launches(p) for p in reports])
            launches = tables[0]
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
        if len(launches.timelines) == 1:  # nsys beside ncu: the timeline, not more launches
            timeline = read_nsys_sqlite(source / launches.timelines[0])
    elif sniff(source) in (NSYS_REP, NSYS_SQLITE):  # by content: a foreign SQLite file gets its own message
        timeline = read_nsys_sqlite(source)
        launches = timeline_table(timeline, source)
    else:
        pc_read = start_pc_read(source) if sniff(source) == NCU_REP else None
        launches = or_discard(pc_read, lambda: read_launches(source))
    pc_samples, pc_note = pc_samples_of(pc_read) if pc_read is not None else (None, None)
    workload = _workload(spec, source)
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
    )
    if removal is not None:
        apply_removal(analysis, removal)
    return _run(
        source,
        launches,
        analysis,
        warnings + ([pc_note] if pc_note else []),
        problems,
        spec=spec,
        workload=workload,
        manifest=manifest,
        timeline=timeline,
        pc_samples=pc_samples,
        removal=Path(removal) if removal is not None else None,
    )


def _run(
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
        **evidence,
    )


def make_workload(ctx: int | str = "128k", **fields) -> VerifyWorkload:
    """A VerifyWorkload from user-facing arguments (`ctx` takes 131072, "128k", "1m")."""
    return VerifyWorkload(ctx_len=parse_ctx_len(ctx), **fields)


TOOLS = ("ncu", "nsys", "both")
DEFAULT_TIMEOUT_S = 900.0  # the whole capture; a 128k run under both tools fits well inside it
DEFAULT_TIMING_SAMPLES = 30  # the timing pass after the captures (what `compare` tests and gates on)


def choose_tools(
    tool: str | None = None, ncu: str | None = None, nsys: str | None = None, notes: list[str] | None = None
) -> dict[str, str]:
    """{"ncu": path, "nsys": path} for the tools to run: `tool` "ncu", "nsys" or "both" needs them
    found; None takes both when both are found and nsys's importer can run, else the one that works
    (ToolNotFound when neither). Why a found tool was left out is appended to `notes`."""

    finders = {"ncu": lambda: find_ncu(ncu), "nsys": lambda: find_nsys(nsys)}
    if tool is not None:
        if tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
        wanted = ["ncu", "nsys"] if tool == "both" else [tool]
        return {name: finders[name]() for name in wanted}
    found, errors = {}, []
    for name, find in finders.items():
        try:
            found[name] = find()
        except ToolNotFound as exc:
            errors.append(str(exc))
    if not found:
        raise ToolNotFound("no profiler found: " + "; ".join(errors))
    if "nsys" in found and "ncu" in found:
        missing = importer_missing(found["nsys"])
        if missing:
            found.pop("nsys")
            if notes is not None:
                notes.append(
                    f"no timeline: nsys's importer cannot load {', '.join(missing)} here, so nsys would "
                    "leave no report (`roofline doctor` says how to fix it; --tool both insists)"
                )
    return found


def profile(
    kernel: str,
    workload: VerifyWorkload | None = None,
    *,
    iterations: int = 3,
    out: str | Path | None = None,
    force: bool = False,
    ncu: str | None = None,
    nsys: str | None = None,
    tool: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    progress: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    preset: str | None = None,
    chip: str | None = None,
    timing_samples: int = DEFAULT_TIMING_SAMPLES,
    source: bool = False,
    **workload_fields,
) -> Run:
    """Run `kernel` on `workload` under Nsight Compute and/or Nsight Systems in a child process and
    return the new run, analysed from what the capture read (each report is read once).

    `tool`: "ncu", "nsys" or "both"; None takes both when both are found, else the one found.
    `timeout` bounds the whole capture (seconds): past it the running tool's process group is ended.
    `env` is added to the profiled child's environment (e.g. CUDA_VISIBLE_DEVICES); `command` is
    the command recorded in spec.json as the one that made the run (default: sys.argv).
    The run is written atomically (see profiler/rundir.py): on failure, timeout or Ctrl-C it is kept
    under `<out>.failed-<time>` with its logs, and an existing `out` is never touched unless `force`.
    `preset`: the ncu metric preset (profiler/metrics.py; default DEFAULT_PRESET), resolved for `chip`
    (default: the chip of the local GPU, kernels/data/hardware.json). `source`: add the source counters and
    embed the kernel's source (profiler/metrics.py with_source): each sampled line's text.
    `timing_samples`: after the captures, a child with no profiler attached times the step this many
    times (rotated input sets, CUDA-graph replays) into timing.json, which `compare` tests; 0 skips it.
    """

    say = progress or (lambda msg: None)
    # resolved once (unknown names: an error before anything runs); it travels to ncu and the run's records
    resolved = resolve_preset(preset, chip, None if chip else local_device_name(), source=source)
    info = get_kernel(kernel)
    name = info.name
    workload = workload or make_workload(**workload_fields)
    info.require(workload)  # before anything runs: an optional kernel not built, an unsupported workload
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    if timeout is not None and timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    if timing_samples < 0:
        raise ValueError("timing_samples must be 0 (no timing pass) or more")
    if tool is not None and tool not in TOOLS:
        raise ValueError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    writer = RunWriter(
        out if out is not None else Path("runs") / default_run_name(name, workload), force=force, unique=out is None
    )
    if timeout is not None:
        say(f"capture timeout {timeout:g} s (--timeout)")
    started = time.time()
    running = "setup"
    try:
        spec = RunSpec(
            kernel=name,
            workload=workload.to_dict(),
            iterations=iterations,
            created=writer.manifest.created,
            command=tuple(command or sys.argv),
        )
        spec_file = writer.write_spec(spec)
        app = [
            sys.executable,
            "-m",
            "profiler.harness",
            "--spec",
            str(spec_file),
            "--kernel",
            name,
            "--iters",
            str(iterations),
            "--info",
            str(writer.file("harness")),
        ]
        left_out: list[str] = []
        tools = choose_tools(tool, ncu, nsys, notes=left_out)
        for note in left_out:
            say(note)
        if tool is None and len(tools) == 1 and not left_out:
            say(f"only {next(iter(tools))} was found: profiling with it alone (--tool both needs ncu and nsys)")
        cap = Capture(
            writer,
            app,
            say,
            env,
            deadline=None if timeout is None else started + timeout,
            limit=f"--timeout {timeout:g} s (the whole capture)" if timeout is not None else None,
        )
        ncu_run = nsys_run = timing = None
        notes: list[str] = []  # what the capture says beside the analysis (analysis.json's notes)
        if "ncu" in tools:
            running = "ncu"
            if resolved.note:
                say(resolved.note)
            ncu_run = capture_ncu(cap, tools["ncu"], iterations, workload, preset=resolved)
            notes += ncu_run.notes
        if "nsys" in tools:
            running = "nsys"
            try:
                nsys_run = capture_nsys(cap, tools["nsys"])
            except ProfilerError as exc:
                if tool is not None or ncu_run is None or isinstance(exc, ToolTimeout):
                    raise  # asked for by name, nothing else captured, or out of time: the run failed
                why = nsys_left_out(writer, exc)
                say(why)
                notes.append(why)
        timeline = nsys_run.timeline if nsys_run is not None else None
        if ncu_run is not None:
            launches = ncu_run.launches
        else:  # an nsys-only run: the timeline's launches, no counters
            launches = timeline_table(timeline, Path(timeline.source))
            require_complete(launches, iterations, None, Path(timeline.source))
        harness = RunDir(writer.path).harness()
        if timing_samples:
            running = "timing"
            timing = timing_pass(cap, timing_samples, harness.get("device"))
            notes += timing.notes
        running = "analysis"
        writer.manifest.host = {
            "gpu": harness.get("device"),
            "torch": harness.get("torch"),
            "triton": harness.get("triton"),
            "cuda": harness.get("cuda"),
            "python": sys.version.split()[0],
        }
        launches.frame.to_csv(writer.file("launches"), index=False)
        pc_samples = ncu_run.pc_samples if ncu_run is not None else None
        pc_notes = [ncu_run.pc_note] if ncu_run is not None and ncu_run.pc_note else []
        analysis = summarize(
            launches, workload, iterations, preset=ncu_run.preset if ncu_run else None, pc_samples=pc_samples
        )
        record = dataclasses.replace(analysis, notes=[*analysis.notes, *pc_notes, *notes]).to_dict()
        record["profile"] = _profile_record(list(tools), ncu_run, nsys_run, timing, started)
        if nsys_run is not None:
            record["timeline"] = timeline.summary
        writer.write_json("analysis", record)
        final = writer.commit()
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP as Interrupted: the run is kept
        raise writer.kept_error(exc, running if running in ("ncu", "nsys") else None) from exc
    except Exception as exc:
        if running == "setup":  # refused before anything ran: no folder is left
            writer.discard()
            raise
        raise writer.kept_error(exc) from exc
    passes = f"{max(ncu_run.passes, default=0)} replay passes per launch, preset {ncu_run.preset}, " if ncu_run else ""
    say(f"wrote {final}: {passes}wall {time.time() - started:.1f} s")
    # what load(final) gives, from what the capture read: the reports are not read again
    return _run(
        final,
        launches,
        analysis,
        pc_notes,
        [],
        pc_samples,
        spec=spec,
        workload=workload,
        manifest=writer.manifest,
        timeline=timeline,
    )


def _profile_record(
    tools: list[str], ncu: NcuCapture | None, nsys: NsysCapture | None, timing: TimingPass | None, started: float
) -> dict:
    """analysis.json's "profile": the tools, ncu's passes, preset and chip, each step's wall time."""
    out: dict = {"tools": tools}
    if ncu is not None:
        out.update(passes=ncu.passes, ncu_wall_s=ncu.wall_s, preset=ncu.preset, chip=ncu.chip)
    if nsys is not None:
        out["nsys_wall_s"] = nsys.wall_s
    if timing is not None and timing.wall_s is not None:
        out["timing_wall_s"] = timing.wall_s
    out["wall_s"] = round(time.time() - started, 1)
    return out


def report(
    run: Run | str | Path | None = None,
    out: str | Path | None = None,
    force: bool = False,
    source: str | Path | None = None,
) -> list[Path]:
    """A GitHub-flavoured markdown report of a run (or of what `load(path)` reads) with roofline and
    stall charts beside it; never replaces an existing report unless `force`. See roofline/reporting.py."""
    if not isinstance(run, Run):
        source = source if source is not None else run
        run = load(run)
    return write_report(run, out, force=force, source=source)


def compare(
    base: Run | str | Path,
    head: Run | str | Path,
    fail_if_slower_pct: float | None = None,
    allow_different_workload: bool = False,
    allow_incomplete: bool = False,
    p_value: float = DEFAULT_P_VALUE,
) -> Comparison:
    """Compare two runs (Run objects or paths `load` reads): step, kernels, timing samples and the gate
    (roofline/comparison.py)."""
    runs = [r if isinstance(r, Run) else load(r, allow_incomplete=allow_incomplete) for r in (base, head)]
    return compare_runs(
        *runs, fail_if_slower_pct=fail_if_slower_pct, allow_different_workload=allow_different_workload, p_value=p_value
    )
