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
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from kernels.errors import CaptureFailed
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from profiler.errors import (
    ApplicationFailed,
    Interrupted,
    ProfilerError,
    ReportError,
    ToolNotFound,
    ToolTimeout,
    refuse_special,
)
from profiler.launch_table import LaunchTable, PcSamples
from profiler.metrics import ResolvedPreset, resolve_preset
from profiler.ncu import check_collected, find_ncu, ncu_version, requested_metrics, run_ncu
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_source import PcRead
from profiler.nsys import find_nsys, importer_missing, nsys_version, run_nsys
from profiler.nsys_reader import Timeline, read_nsys_sqlite, timeline_launches
from profiler.proc import run_tool
from profiler.readers import NCU_REP, NSYS_REP, NSYS_SQLITE, read_folder, read_launches, sniff
from profiler.rundir import (
    ANALYSIS,
    HARNESS,
    LAUNCHES,
    TIMING,
    Manifest,
    RunDir,
    RunDirError,
    RunSpec,
    RunWriter,
    default_run_name,
)
from roofline.analysis import Analysis, summarize
from roofline.chips import local_device_name
from roofline.comparison import DEFAULT_P_VALUE, CompareError, Comparison  # noqa: F401 (public API)
from roofline.comparison import compare as compare_runs
from roofline.floor import Step
from roofline.reporting import report as write_report
from roofline.waits import stalls_by_class, stalls_by_line

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


class IncompleteRun(ReportError):
    """The report holds fewer launches than the run asked for."""


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


def completeness(launches: LaunchTable, iterations: int | None, expected: int | None) -> list[str]:
    """Why a launch table is not the whole run ([] when it is): fewer launches than the tool said it
    profiled, or a kernel whose launch count is not a multiple of the iterations asked for."""
    problems = []
    if expected is not None and len(launches) != expected:
        problems.append(f"expected {expected} launches (as ncu's log reported them), found {len(launches)}")
    if iterations:
        for kernel, n in launches.frame.groupby("kernel", sort=False).size().items():
            if n % iterations:
                problems.append(f"{kernel}: {n} launches, not a multiple of the {iterations} iterations asked for")
    return problems


def _workload(spec: RunSpec | None, where: Path) -> VerifyWorkload | None:
    """The run's verify workload; None for a report without a spec and for a probe's run (workload {})."""
    if spec is None or not spec.workload:
        return None
    try:
        return VerifyWorkload.from_dict(spec.workload)
    except WorkloadError as exc:
        raise RunDirError(f"{where}: workload: {exc}") from None


def load(path: str | Path | None = None, allow_incomplete: bool = False, gpu=None) -> Run:
    """Read captured evidence without a GPU: a run directory (only the reports its manifest names,
    checked against their checksums), a report file, or a folder of reports. None: the bundled sample."""
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
            pc_read = _start_pc_read(ncu_reports[0]) if len(ncu_reports) == 1 else None
            tables = _or_discard(pc_read, lambda: [read_launches(p) for p in reports])
            launches = tables[0]
            if len(tables) > 1:  # launch numbers repeat across the reports: no rule results
                launches = dataclasses.replace(
                    tables[0], frame=pd.concat([t.frame for t in tables], ignore_index=True), rules={}
                )
            counts = [e.launches for e in manifest.reports if e.tool == "ncu"]
            expected = sum(counts) if all(c is not None for c in counts) else None
        else:  # an nsys-only run: the timeline's launches, no counters
            launches = _timeline_table(timeline, sqlite[0])
    elif source.is_dir():
        launches = read_folder(source)
        if len(launches.timelines) == 1:  # nsys beside ncu: the timeline, not more launches
            timeline = read_nsys_sqlite(source / launches.timelines[0])
    elif sniff(source) in (NSYS_REP, NSYS_SQLITE):  # by content: a foreign SQLite file gets its own message
        timeline = read_nsys_sqlite(source)
        launches = _timeline_table(timeline, source)
    else:
        pc_read = _start_pc_read(source) if sniff(source) == NCU_REP else None
        launches = _or_discard(pc_read, lambda: read_launches(source))
    pc_samples, pc_note = pc_samples_of(pc_read) if pc_read is not None else (None, None)
    workload = _workload(spec, source)
    iterations = spec.iterations if spec else None
    problems = completeness(launches, iterations, expected)
    if launches.cut:
        problems.insert(0, launches.cut)
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
    analysis.notes += warnings
    if pc_note:
        analysis.notes.append(pc_note)
    if problems:
        analysis.notes.append("INCOMPLETE: " + "; ".join(problems) + " (no step time)")
    if not launches.counters:
        analysis.notes.append(
            "launch times from the nsys timeline, no hardware counters: no bound or cause "
            "(profile with --tool ncu or both for them)"
        )
    return Run(
        source=source,
        launch_table=launches,
        analysis=analysis,
        spec=spec,
        workload=workload,
        manifest=manifest,
        complete=not problems,
        problems=problems,
        timeline=timeline,
        pc_samples=pc_samples.frame if pc_samples is not None else None,
    )


def pc_samples_of(report: Path | PcRead) -> tuple[PcSamples | None, str | None]:
    """(the report's PC samples, None), or (None, a note) when they cannot be read: they add to the
    verdict, so a report whose launches read well is still analysed, and the note says what is missing.
    `report`: a path, or a read already started (profiler.ncu_source.PcRead)."""
    try:
        return (report if isinstance(report, PcRead) else PcRead(report)).result(), None
    except ReportError as exc:
        return None, f"PC samples not read (no per-instruction breakdown of where the warps wait): {exc}"


def _or_discard(pc_read, read: Callable):
    """read(), stopping the PC samples' read when it fails (a damaged report: its error is the launches')."""
    try:
        return read()
    except BaseException:
        if isinstance(pc_read, PcRead):
            pc_read.discard()
        raise


def _start_pc_read(report: Path) -> PcRead | Path:
    """The PC samples' read, started now so that it overlaps the launches' (the path when it cannot start:
    pc_samples_of then says why)."""
    try:
        return PcRead(report)
    except ReportError:
        return report


def _timeline_table(timeline: Timeline, path: Path) -> LaunchTable:
    table = timeline_launches(timeline)
    table.frame["source"] = Path(path).name
    return dataclasses.replace(table, source=str(path))


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
    return the new run.

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
            str(writer.path / HARNESS),
        ]
        left_out: list[str] = []
        tools = choose_tools(tool, ncu, nsys, notes=left_out)
        for note in left_out:
            say(note)
        if tool is None and len(tools) == 1 and not left_out:
            say(f"only {next(iter(tools))} was found: profiling with it alone (--tool both needs ncu and nsys)")
        limit = f"--timeout {timeout:g} s (the whole capture)" if timeout is not None else None

        def left() -> float | None:
            return None if timeout is None else max(0.1, timeout - (time.time() - started))

        launches = timeline = None
        result: dict = {"profile": {"tools": list(tools)}}
        if "ncu" in tools:
            running = "ncu"
            if resolved.note:
                say(resolved.note)
            launches = _capture_ncu(
                writer,
                app,
                tools["ncu"],
                iterations,
                workload,
                say,
                left(),
                limit,
                result,
                env,
                preset=resolved,
            )
        if "nsys" in tools:
            running = "nsys"
            try:
                timeline = _capture_nsys(writer, app, tools["nsys"], say, left(), limit, result, env)
            except ProfilerError as exc:
                if tool is not None or launches is None or isinstance(exc, ToolTimeout):
                    raise  # asked for by name, nothing else captured, or out of time: the run failed
                why = _nsys_left_out(writer, exc)
                say(why)
                result.setdefault("notes", []).append(why)
            if launches is None:
                launches = _timeline_table(timeline, writer.path / Path(timeline.source).name)
                problems = completeness(launches, iterations, None)
                if problems:
                    raise IncompleteRun(f"{timeline.source}: incomplete capture: {'; '.join(problems)}")
        if timing_samples:
            running = "timing"
            _timing_pass(writer, app, timing_samples, say, left(), limit, result, env)
        running = "analysis"
        harness = RunDir(writer.path).harness()
        writer.manifest.host = {
            "gpu": harness.get("device"),
            "torch": harness.get("torch"),
            "triton": harness.get("triton"),
            "cuda": harness.get("cuda"),
            "python": sys.version.split()[0],
        }
        launches.frame.to_csv(writer.path / LAUNCHES, index=False)
        ncu_preset = resolved.name if "ncu" in tools else None
        report = result.pop("ncu_report", None)
        pc_samples, pc_note = pc_samples_of(report) if report is not None else (None, None)
        analysis = summarize(launches, workload, iterations, preset=ncu_preset, pc_samples=pc_samples)
        if pc_note:
            analysis.notes.append(pc_note)
        analysis.notes += result.pop("notes", [])
        out_dict = analysis.to_dict()
        result["profile"]["wall_s"] = round(time.time() - started, 1)
        out_dict.update(result)
        writer.write_json(ANALYSIS, out_dict)
        final = writer.commit()
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP as Interrupted: the run is kept
        signum = exc.exit_code - 128 if isinstance(exc, Interrupted) else signal.SIGINT
        how = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        reason = (
            f"interrupted ({how}) while {running} was running; its process group was ended"
            if running in ("ncu", "nsys")
            else f"interrupted ({how})"
        )
        raise Interrupted(signum, kept_at=writer.fail(reason), reason=reason) from exc
    except Exception as exc:
        if running == "setup":  # refused before anything ran: no folder is left
            writer.discard()
            raise
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise CaptureFailed(str(exc) or reason, kept_at=writer.fail(reason), reason=reason) from exc
    p = result["profile"]
    passes = f"{max(p['passes'], default=0)} replay passes per launch, preset {p['preset']}, " if "passes" in p else ""
    say(f"wrote {final}: {passes}wall {time.time() - started:.1f} s")
    return load(final)


def _capture_ncu(
    writer: RunWriter,
    app: list[str],
    exe: str,
    iterations: int,
    workload: VerifyWorkload,
    say: Callable[[str], None],
    timeout: float | None,
    limit: str | None,
    result: dict,
    env: dict[str, str] | None = None,
    *,
    preset: ResolvedPreset,
) -> LaunchTable:
    """ncu into the run: report, log, version, the launch table (checked for missing metrics)."""
    say(
        f"[ncu] profiling {spec_name(app)} ({workload.describe()}), preset {preset.name} ({preset.chip}) -> {writer.final}"
    )
    t0 = time.time()
    ncu_run = run_ncu(
        app, writer.path, ncu=exe, progress=say, timeout=timeout, limit_name=limit, env=env, preset=preset
    )
    writer.log_command(ncu_run.command)
    writer.add_log(ncu_run.log)
    writer.manifest.tools["ncu"] = {"path": exe, "version": ncu_version(exe)}
    writer.add_report(
        ncu_run.report,
        "ncu",
        launches=len(ncu_run.passes),
        passes=max(ncu_run.passes, default=None),
        preset=preset.name,
    )
    say(
        f"[ncu] done in {time.time() - t0:.1f} s: {len(ncu_run.passes)} launches profiled, "
        f"{max(ncu_run.passes, default=0)} replay passes each"
    )
    absent = check_collected(read_ncu_report(ncu_run.report), requested_metrics(ncu_run.command), ncu_run.report)
    if absent:
        result.setdefault("notes", []).append(f"this GPU has no value for {', '.join(absent)} (chip-specific)")
    launches = read_launches(ncu_run.report)
    result["ncu_report"] = ncu_run.report  # its PC samples are read for the analysis
    problems = completeness(launches, iterations, len(ncu_run.passes))
    if problems:
        raise IncompleteRun(f"{ncu_run.report}: incomplete capture: {'; '.join(problems)}")
    result["profile"].update(
        passes=ncu_run.passes, ncu_wall_s=round(time.time() - t0, 1), preset=preset.name, chip=preset.chip
    )
    return launches


def _capture_nsys(
    writer: RunWriter,
    app: list[str],
    exe: str,
    say: Callable[[str], None],
    timeout: float | None,
    limit: str | None,
    result: dict,
    env: dict[str, str] | None = None,
) -> Timeline:
    """nsys into the run: timeline report, sqlite export, log, version; the timeline read back."""
    say(f"[nsys] timeline of {spec_name(app)} (-t cuda,nvtx) -> {writer.final}")
    t0 = time.time()
    nsys_run = run_nsys(app, writer.path, nsys=exe, progress=say, timeout=timeout, limit_name=limit, env=env)
    writer.log_command(nsys_run.command)
    writer.log_command(nsys_run.export)
    writer.add_log(nsys_run.log)
    writer.add_log(nsys_run.export_log)
    writer.manifest.tools["nsys"] = {"path": exe, "version": nsys_version(exe)}
    writer.add_report(nsys_run.report, "nsys")
    timeline = read_nsys_sqlite(nsys_run.sqlite)
    writer.add_report(nsys_run.sqlite, "nsys-sqlite", launches=timeline.summary["launches_in_range"])
    s = timeline.summary
    say(f"[nsys] done in {time.time() - t0:.1f} s: {s['steps']} steps, {s['launches_in_range']} launches in the range")
    result["timeline"] = s
    result["profile"]["nsys_wall_s"] = round(time.time() - t0, 1)
    return timeline


def _nsys_left_out(writer: RunWriter, exc: ProfilerError) -> str:
    """Keep what a failed nsys left, named in the manifest (its logs; a raw .qdstrm stream, which
    `nsys import` can still turn into a report) and say in one line why the run has no timeline."""
    for kept in sorted(writer.path.glob("profile.nsys*.log")) + sorted(writer.path.glob("profile*.qdstrm")):
        writer.add_log(kept)
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        f"[nsys] no timeline: {first} (the ncu capture is complete; --tool both would have failed the run; "
        f"nsys's log: {', '.join(n for n in writer.manifest.logs if n.startswith('profile.nsys')) or 'none'})"
    )


def _timing_pass(
    writer: RunWriter,
    app: list[str],
    samples: int,
    say: Callable[[str], None],
    timeout: float | None,
    limit: str | None,
    result: dict,
    env: dict[str, str] | None = None,
) -> None:
    """The harness again, with no profiler attached: `samples` timings of the step into timing.json
    (a report of tool "timing" in the manifest). Skipped, with a note, when the captured child
    recorded no device in harness.json (a stand-in tool that never ran it)."""
    if not RunDir(writer.path).harness().get("device"):
        result.setdefault("notes", []).append(
            "no timing pass: the profiled child recorded no device in "
            f"{HARNESS}; compare will gate on the profiler's times"
        )
        return
    out, log = writer.path / TIMING, writer.path / "timing.log"
    cmd = app[: app.index("--iters")] + ["--timing-samples", str(samples), "--timing-out", str(out)]
    say(f"[timing] {samples} samples of {spec_name(app)}'s step, no profiler attached (rotated inputs, CUDA graph)")
    t0 = time.time()
    done = run_tool(cmd, log, "the timing pass", timeout=timeout, env=env, limit_name=limit)
    writer.log_command(cmd)
    writer.add_log(log)
    if done.returncode != 0 or not out.is_file():
        raise ApplicationFailed(
            f"the timing pass failed (exit code {done.returncode}); --timing-samples 0 skips it", done.lines, str(log)
        )
    writer.add_report(out, "timing")
    result["profile"]["timing_wall_s"] = round(time.time() - t0, 1)
    say(f"[timing] done in {time.time() - t0:.1f} s: {(done.lines or [''])[-1].removeprefix('harness: ')}")


def spec_name(app: list[str]) -> str:
    """The kernel a harness command line runs."""
    return app[app.index("--kernel") + 1] if "--kernel" in app else "the program"


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
