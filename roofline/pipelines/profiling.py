"""`profile`'s body: the run writer, the tools to run, one `Capture` for the capture steps (ncu, nsys,
the timing pass: roofline/pipelines/capture.py), the analysis of what they read, the commit; a failure
keeps the run under `<out>.failed-<time>`."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kernels.batches import make_workload as batch_workload
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload
from profiler.errors import ProfilerError, ToolNotFound, ToolTimeout
from profiler.metrics import resolve_preset
from profiler.ncu import find_ncu
from profiler.nsys import find_nsys, importer_missing
from profiler.run_writer import RunWriter
from profiler.rundir import RunDir, RunSpec, default_run_name
from profiler.source_tree import tree_commit
from roofline.analysis.removal import apply_removal
from roofline.analysis.summary import summarize
from roofline.catalogue.chips import local_device_name
from roofline.pipelines.capture import (
    DEFAULT_TIMING_ROUNDS,
    Capture,
    NcuCapture,
    NsysCapture,
    TimingPass,
    capture_ncu,
    capture_nsys,
    nsys_left_out,
    require_complete,
    timeline_table,
    timing_pass,
)
from roofline.pipelines.run import Run, make_run, passes_note
from roofline.pipelines.why import why_pass


def make_workload(
    ctx: int | str | None = None, lens: str | None = None, batch: int | None = None, seed: int = 0, **fields
) -> VerifyWorkload:
    """A VerifyWorkload from user-facing arguments: `ctx` takes 131072, "128k" (the default), "1m"; `lens` a ragged batch
    (`"4k,128k,2k"`, `"uniform:1k-32k"` with `batch` and `seed`, `"mix:1x128k,15x2k"`, `"file:PATH"`:
    kernels/batches.py), which replaces `ctx`."""
    return batch_workload(ctx, lens=lens, batch=batch, seed=seed, **fields)


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
    timing_rounds: int = DEFAULT_TIMING_ROUNDS,
    source: bool = False,
    why: bool = False,
    experiment: list[str] | None = None,
    **workload_fields,
) -> Run:
    """roofline.api.profile: the run `kernel` on `workload` makes, written and analysed (its docstring
    says what each argument does). `experiment`: the removal experiment's program for `why` (a stand-in)."""

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
    if timing_rounds < 1:
        raise ValueError("timing_rounds must be at least 1")
    if tool is not None and tool not in TOOLS:
        raise ValueError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    writer = RunWriter(
        out if out is not None else Path("runs") / default_run_name(name, workload), force=force, unique=out is None
    )
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
        tools = choose_tools(tool, ncu, nsys, notes=left_out)  # no profiler: the error is the first line
        if timeout is not None:
            say(f"capture timeout {timeout:g} s (--timeout)")
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
        ncu_run = nsys_run = timing = why_run = None
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
                no_timeline = nsys_left_out(writer, exc)
                say(no_timeline)
                notes.append(no_timeline)
        timeline = nsys_run.timeline if nsys_run is not None else None
        if ncu_run is not None:
            launches = ncu_run.launches
        else:  # an nsys-only run: the timeline's launches, no counters
            launches = timeline_table(timeline, Path(timeline.source))
            require_complete(launches, iterations, None, Path(timeline.source))
        harness = RunDir(writer.path).harness()
        if timing_samples:
            running = "timing"
            timing = timing_pass(cap, timing_samples, harness.get("device"), timing_rounds)
            notes += timing.notes
        if why:
            running = "the removal experiment"
            why_run = why_pass(cap, name, workload, experiment)
            notes += why_run.notes
        running = "analysis"
        writer.manifest.host = {
            "gpu": harness.get("device"),
            "torch": harness.get("torch"),
            "triton": harness.get("triton"),
            "cuda": harness.get("cuda"),
            "python": sys.version.split()[0],
            "commit": tree_commit(),  # the source the samples' file:line cite (pipelines/source_lines.py)
        }
        launches.frame.to_csv(writer.file("launches"), index=False)
        pc_samples = ncu_run.pc_samples if ncu_run is not None else None
        pc_notes = [ncu_run.pc_note] if ncu_run is not None and ncu_run.pc_note else []
        analysis = summarize(
            launches, workload, iterations, preset=ncu_run.preset if ncu_run else None, pc_samples=pc_samples
        )
        if why_run is not None and why_run.report is not None:  # the experiment names what sets the pace
            apply_removal(analysis, why_run.report, cap.shown(why_run.report))
        record = dataclasses.replace(analysis, notes=[*analysis.notes, *pc_notes, *notes]).to_dict()
        record["profile"] = _profile_record(list(tools), ncu_run, nsys_run, timing, started)
        if why_run is not None and why_run.wall_s is not None:
            record["profile"]["removal_wall_s"] = why_run.wall_s
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
    passes_said = passes_note(writer.manifest)
    return make_run(
        final,
        launches,
        analysis,
        pc_notes + ([passes_said] if passes_said else []),
        [],
        pc_samples,
        spec=spec,
        workload=workload,
        manifest=writer.manifest,
        timeline=timeline,
        removal=final / why_run.report.name if why_run is not None and why_run.report is not None else None,
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
