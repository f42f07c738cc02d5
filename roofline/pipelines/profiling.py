"""`profile`'s body: the run writer, the tools to run, one `Capture` for the capture steps (ncu, nsys,
the timing pass: roofline/pipelines/capture.py), the analysis of what they read, the commit; a failure
keeps the run under `<out>.failed-<time>`."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kernels.registry import get_kernel
from profiler.errors import ProfilerError, ToolNotFound, ToolTimeout
from profiler.in_kernel import no_scopes_line
from profiler.launch_table import LaunchTable
from profiler.metrics import resolve_preset
from profiler.ncu import find_ncu
from profiler.nsys import find_nsys, importer_missing
from profiler.round_server import AheadServer
from profiler.run_writer import RunWriter
from profiler.rundir import RunDir, RunSpec, default_run_name
from profiler.source_tree import tree_commit
from roofline.analysis.removal import apply_removal
from roofline.analysis.summary import summarize
from roofline.catalogue.chips import local_device_name
from roofline.pipelines.capture import (
    Capture,
    NcuCapture,
    NsysCapture,
    TimingPass,
    capture_nsys,
    nsys_left_out,
    require_complete,
    run_ncu_capture,
    timeline_table,
    timing_pass,
    timing_server,
)
from roofline.pipelines.in_kernel import in_kernel_pass, load_in_kernel
from roofline.pipelines.request import ProfileRequest
from roofline.pipelines.run import Run, make_run, passes_note
from roofline.pipelines.why import WhyPass, why_pass


def choose_tools(
    tool: str | None = None, ncu: str | None = None, nsys: str | None = None, notes: list[str] | None = None
) -> dict[str, str]:
    """{"ncu": path, "nsys": path} for the tools to run: `tool` "ncu", "nsys" or "both" needs them
    found; None takes both when both are found and nsys's importer can run, else the one that works
    (ToolNotFound when neither; `tool` is a ProfileRequest's, checked there). Why a found tool was left out is
    appended to `notes`."""

    finders = {"ncu": lambda: find_ncu(ncu), "nsys": lambda: find_nsys(nsys)}
    if tool is not None:
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


@dataclass
class _Captured:
    """What a profile's capture steps gave so far, and the step running (how a failure is kept depends on it)."""

    tools: dict[str, str] = field(default_factory=dict)
    ncu: NcuCapture | None = None
    nsys: NsysCapture | None = None
    timing: TimingPass | None = None
    why: WhyPass | None = None
    notes: list[str] = field(default_factory=list)  # what the capture says beside the analysis (analysis.json's)
    stamped: object = None  # the in-kernel timeline, once read back (roofline/pipelines/in_kernel.py)
    server: AheadServer | None = None  # the timing pass's round server, importing while the profilers run
    running: str = "setup"

    @property
    def timeline(self):
        return self.nsys.timeline if self.nsys is not None else None

    @property
    def removal(self) -> Path | None:
        return self.why.report if self.why is not None else None


def profile(
    request: ProfileRequest,
    *,
    out: str | Path | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    experiment: list[str] | None = None,
) -> Run:
    """roofline.api.profile: the run `request` makes, written and analysed (the API's docstring says what each
    argument does). `experiment`: the removal experiment's program for `why` (a stand-in)."""

    say = progress or (lambda msg: None)
    # resolved once (unknown names: an error before anything runs); it travels to ncu and the run's records
    chip, timeout, workload = request.chip, request.timeout, request.workload
    resolved = resolve_preset(request.preset, chip, None if chip else local_device_name(), source=request.source)
    info = get_kernel(request.kernel)
    name = info.name
    info.require(workload)  # before anything runs: an optional kernel not built, an unsupported workload
    unscoped = no_scopes_line(name) if request.in_kernel else None  # said at once, the capture goes on without it
    if unscoped:
        say(unscoped)
    writer = RunWriter(
        out if out is not None else Path("runs") / default_run_name(name, workload), force=force, unique=out is None
    )
    started = time.time()
    got = _Captured()
    got.notes += [unscoped] if unscoped else []
    try:
        spec = RunSpec(
            name, workload.to_dict(), request.iterations, writer.manifest.created, tuple(command or sys.argv)
        )
        spec_file = writer.write_spec(spec)
        got.tools = _tools(request, say)  # no profiler: the error is the first line
        if timeout is not None:
            say(f"capture timeout {timeout:g} s (--timeout)")
        deadline = None if timeout is None else started + timeout
        limit = f"--timeout {timeout:g} s (the whole capture)" if timeout is not None else None
        cap = Capture(writer, _harness_app(name, request.iterations, spec_file, writer), say, env, deadline, limit)
        with _timing_server(cap, request, got):
            _capture(cap, request, resolved, got)
            launches = _launches(got, request.iterations)
            harness = RunDir(writer.path).harness()
            _after_capture(cap, request, name, spec_file, harness.get("device"), experiment, got)
        got.running = "analysis"
        analysis, pc_notes = _analyse(cap, request, launches, harness, got, started)
        final = writer.commit()
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP as Interrupted: the run is kept
        raise writer.kept_error(exc, got.running if got.running in ("ncu", "nsys") else None) from exc
    except Exception as exc:
        if got.running == "setup":  # refused before anything ran: no folder is left
            writer.discard()
            raise
        raise writer.kept_error(exc) from exc
    ncu_run = got.ncu
    passes = f"{max(ncu_run.passes, default=0)} replay passes per launch, preset {ncu_run.preset}, " if ncu_run else ""
    say(f"wrote {final}: {passes}wall {time.time() - started:.1f} s")
    # what load(final) gives, from what the capture read: the reports are not read again
    passes_said = passes_note(writer.manifest)
    return make_run(
        final,
        launches,
        analysis,
        pc_notes + ([passes_said] if passes_said else []),
        [],
        ncu_run.pc_samples if ncu_run is not None else None,
        spec=spec,
        workload=workload,
        manifest=writer.manifest,
        timeline=got.timeline,
        removal=final / got.removal.name if got.removal is not None else None,
        in_kernel=got.stamped,
    )


def _harness_app(name: str, iterations: int, spec_file: Path, writer: RunWriter) -> list[str]:
    """The profiled child's command: the harness, reading the workload from the run's spec.json, recording its
    host (harness.json) and the launch plan it ran (plan.json) in the run."""
    return [
        *(sys.executable, "-m", "profiler.harness", "--spec", str(spec_file), "--kernel", name),
        *("--iters", str(iterations), "--info", str(writer.file("harness")), "--plan", str(writer.file("plan"))),
    ]


def _tools(request: ProfileRequest, say: Callable[[str], None]) -> dict[str, str]:
    """The tools the request runs (choose_tools), saying why a found one is left out or only one was found."""
    left_out: list[str] = []
    tools = choose_tools(request.tool, request.ncu, request.nsys, notes=left_out)
    for note in left_out:
        say(note)
    if request.tool is None and len(tools) == 1 and not left_out:
        say(f"only {next(iter(tools))} was found: profiling with it alone (--tool both needs ncu and nsys)")
    return tools


def _capture(cap: Capture, request: ProfileRequest, resolved, got: _Captured) -> None:
    """ncu, then nsys, into the run; ncu's report is read on a thread beside nsys's capture. A failed nsys beside a
    complete ncu capture is a note unless it was asked for by name (or the capture ran out of time)."""
    with ThreadPoolExecutor(max_workers=1) as beside:
        reading = None
        if "ncu" in got.tools:
            got.running = "ncu"
            if resolved.note:
                cap.say(resolved.note)
            captured = run_ncu_capture(cap, got.tools["ncu"], request.workload, preset=resolved)
            reading = beside.submit(captured.read, request.iterations)
        at = len(got.notes)  # ncu's notes go before nsys's
        if "nsys" in got.tools:
            got.running = "nsys"
            try:
                got.nsys = capture_nsys(cap, got.tools["nsys"])
            except ProfilerError as exc:
                _ncu_read(got, reading, at)
                if request.tool is not None or got.ncu is None or isinstance(exc, ToolTimeout):
                    raise  # asked for by name, nothing else captured, or out of time: the run failed
                no_timeline = nsys_left_out(cap.writer, exc)
                cap.say(no_timeline)
                got.notes.append(no_timeline)
        _ncu_read(got, reading, at)


def _ncu_read(got: _Captured, reading: Future | None, at: int) -> None:
    """ncu's capture, read (once), its notes at `at` of the run's notes."""
    if reading is not None and got.ncu is None:
        got.running = "ncu"
        got.ncu = reading.result()
        got.notes[at:at] = got.ncu.notes


@contextlib.contextmanager
def _timing_server(cap: Capture, request: ProfileRequest, got: _Captured):
    """The timing pass's round server, started before the captures (capture.timing_server) and ended
    whatever happens; its log is dropped where it ran no round, its scratch folder removed."""
    with tempfile.TemporaryDirectory(prefix="roofline-rounds-") as scratch:
        got.server = timing_server(cap, request.timing_samples, Path(scratch))
        try:
            yield
        finally:
            server, got.server = got.server, None
            if server is not None and not server.ran:
                server.end()
                server.log.unlink(missing_ok=True)


def _launches(got: _Captured, iterations: int) -> LaunchTable:
    """ncu's launch table, or for an nsys-only run the timeline's launches (no counters), checked complete."""
    if got.ncu is not None:
        return got.ncu.launches
    timeline = got.timeline
    launches = timeline_table(timeline, Path(timeline.source))
    require_complete(launches, iterations, None, Path(timeline.source))
    return launches


def _after_capture(cap, request: ProfileRequest, name: str, spec_file: Path, device, experiment, got) -> None:
    """The timing pass and, with `why`, the removal experiment: children that read the workload from spec.json."""
    if request.timing_samples:
        got.running = "timing"
        got.timing = timing_pass(cap, request.timing_samples, device, request.timing_rounds, got.server)
        got.notes += got.timing.notes
    if request.why:
        got.running = "the removal experiment"
        got.why = why_pass(cap, name, spec_file, experiment)
        got.notes += got.why.notes
    if request.in_kernel and no_scopes_line(name) is None:
        got.running = "the in-kernel timeline"
        got.notes += in_kernel_pass(cap, name, spec_file).notes


def _analyse(cap: Capture, request: ProfileRequest, launches: LaunchTable, harness: dict, got: _Captured, started):
    """The analysis of what the capture read (with the recorded launch plan and the experiment), written into the
    run with its host, launches.csv and the profile's record; (the analysis, the PC samples' note)."""
    writer, ncu_run = cap.writer, got.ncu
    host = {k: harness.get(k) for k in ("torch", "triton", "cuda")}
    writer.manifest.host = {"gpu": harness.get("device"), **host, "python": sys.version.split()[0]}
    writer.manifest.host["commit"] = tree_commit()  # the source the samples' file:line cite (pipelines/source_lines.py)
    launches.frame.to_csv(writer.file("launches"), index=False)
    pc_samples = ncu_run.pc_samples if ncu_run is not None else None
    pc_notes = [ncu_run.pc_note] if ncu_run is not None and ncu_run.pc_note else []
    preset = ncu_run.preset if ncu_run else None
    plan = RunDir(writer.path).plan()
    analysis = summarize(
        launches, request.workload, request.iterations, preset=preset, pc_samples=pc_samples, plan=plan
    )
    if got.removal is not None:  # the experiment names what sets the pace
        apply_removal(analysis, got.removal, cap.shown(got.removal))
    got.stamped = load_in_kernel(writer.path, analysis) if request.in_kernel else None  # its line in the evidence
    record = dataclasses.replace(analysis, notes=[*analysis.notes, *pc_notes, *got.notes]).to_dict()
    record["profile"] = _profile_record(list(got.tools), ncu_run, got.nsys, got.timing, started)
    if got.why is not None and got.why.wall_s is not None:
        record["profile"]["removal_wall_s"] = got.why.wall_s
    if got.nsys is not None:
        record["timeline"] = got.timeline.summary
    writer.write_json("analysis", record)
    return analysis, pc_notes


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
