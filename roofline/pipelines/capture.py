"""The capture steps of `roofline profile`: ncu, nsys and the timing pass, each into the run being written.

Each step takes the one `Capture` context of the run and returns a typed result holding what it
captured and what it read back: every report is read once here, and `profile` analyses these results
in memory (roofline/pipelines/profiling.py) instead of reading the finished run again.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kernels.spec import VerifyWorkload
from profiler.errors import ApplicationFailed, ProfilerError, ReportError
from profiler.files import KIND_NAMES, NCU_REP, one_line
from profiler.launch_table import LaunchTable, PcSamples
from profiler.metrics import ResolvedPreset
from profiler.ncu import NcuRun, check_collected, record_in_run, requested_metrics, run_ncu
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_source import read_pc_samples
from profiler.ncu_tidy import raw_metrics, tidy_launches
from profiler.nsys import nsys_version, run_nsys
from profiler.nsys_reader import Timeline, read_nsys_sqlite, timeline_launches
from profiler.proc import PLAIN_RUN, ToolControl
from profiler.round_server import AheadServer, forkable, preloads, run_rounds
from profiler.run_writer import RunWriter
from profiler.rundir import HARNESS, RunDirError
from profiler.timing import TimingSamples, merge_rounds, parse_timing, write_timing
from roofline.pipelines.request import DEFAULT_TIMING_ROUNDS


class IncompleteRun(ReportError):
    """The report holds fewer launches than the run asked for."""


def completeness(launches: LaunchTable, iterations: int | None, expected: int | None) -> list[str]:
    """Why a launch table is not the whole run ([] when it is): a report cut short, fewer launches than
    the tool said it profiled, or a kernel whose launch count is not a multiple of the iterations asked for."""
    problems = [launches.cut] if launches.cut else []
    if expected is not None and len(launches) != expected:
        problems.append(f"expected {expected} launches (as ncu's log reported them), found {len(launches)}")
    if iterations:
        for kernel, n in launches.frame.groupby("kernel", sort=False).size().items():
            if n % iterations:
                problems.append(f"{kernel}: {n} launches, not a multiple of the {iterations} iterations asked for")
    return problems


def require_complete(launches: LaunchTable, iterations: int, expected: int | None, shown: Path) -> None:
    """IncompleteRun naming `shown` unless the capture holds every launch the run asked for."""
    problems = completeness(launches, iterations, expected)
    if problems:
        raise IncompleteRun(f"{shown}: incomplete capture: {'; '.join(problems)}")


# -- PC samples: read with the launches (profiler/ncu_reader.py pc_samples=True); alone, for the API


def pc_samples_of(report: Path) -> tuple[PcSamples | None, str | None]:
    """(the report's PC samples, None), or (None, a note) when they cannot be read: they add to the
    verdict, so a report whose launches read well is still analysed, and the note says what is missing."""
    try:
        return read_pc_samples(report), None
    except ReportError as exc:
        return None, f"PC samples not read (no per-instruction breakdown of where the warps wait): {exc}"


def timeline_table(timeline: Timeline, path: Path) -> LaunchTable:
    """The launches of an nsys timeline (no counters), each naming `path`'s file as its source."""
    table = timeline_launches(timeline)
    table.frame["source"] = Path(path).name
    return dataclasses.replace(table, source=str(path))


# -- the steps


@dataclass(frozen=True)
class Capture:
    """What every capture step of one run shares: the run being written, the harness command line
    to profile, where progress goes, the child's extra environment and the whole capture's deadline."""

    writer: RunWriter
    app: list[str]
    say: Callable[[str], None]
    env: dict[str, str] | None = None
    deadline: float | None = None  # time.time() past which the running tool is ended
    limit: str | None = None  # the limit named when a tool runs past the deadline

    def control(self) -> ToolControl:
        """How a tool of this capture runs: its environment, progress to `say`, what is left of the deadline."""
        return ToolControl(env=self.env, progress=self.say, timeout=self.left(), limit_name=self.limit)

    def left(self) -> float | None:
        """Seconds left of the whole capture (None: no limit)."""
        return None if self.deadline is None else max(0.1, self.deadline - time.time())

    def shown(self, path: Path) -> Path:
        """The path a file of the run will have once the run is written (what messages and `load` name)."""
        return self.writer.final / Path(path).name

    @property
    def kernel(self) -> str:
        """The kernel the harness command line runs."""
        app = self.app
        return app[app.index("--kernel") + 1] if "--kernel" in app else "the program"


@dataclass(frozen=True)
class NcuCapture:
    """An ncu capture and what was read from its report (once): launches, PC samples, notes."""

    report: Path
    launches: LaunchTable
    pc_samples: PcSamples | None
    pc_note: str | None  # why the PC samples could not be read
    passes: list[int]
    preset: str
    chip: str
    wall_s: float
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NsysCapture:
    """An nsys capture (report and sqlite export) and its timeline, read once from the export."""

    report: Path
    sqlite: Path
    timeline: Timeline
    wall_s: float


@dataclass(frozen=True)
class TimingPass:
    """The timing pass: its timing.json and wall time, or None for both with the note saying why it
    was skipped."""

    report: Path | None
    wall_s: float | None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NcuCaptured:
    """An ncu capture written into the run and not yet read, so that reading it can run beside the next
    capture: `read` reads the report once for the launch table (checked for missing metrics and launches)
    and, in a child beside it, the PC samples."""

    cap: Capture
    run: NcuRun
    preset: ResolvedPreset
    started: float  # time.time() when ncu started

    def read(self, iterations: int) -> NcuCapture:
        ncu_run, preset = self.run, self.preset
        shown = self.cap.shown(ncu_run.report)
        launches, absent = _read_ncu(ncu_run.report, shown, requested_metrics(ncu_run.command))
        require_complete(launches, iterations, len(ncu_run.passes), shown)
        pc_samples, pc_note = launches.pc_samples, launches.pc_note
        return NcuCapture(
            report=ncu_run.report,
            launches=launches,
            pc_samples=pc_samples,
            pc_note=pc_note,
            passes=ncu_run.passes,
            preset=preset.name,
            chip=preset.chip,
            wall_s=round(time.time() - self.started, 1),
            notes=[f"this GPU has no value for {', '.join(absent)} (chip-specific)"] if absent else [],
        )


def run_ncu_capture(cap: Capture, exe: str, workload: VerifyWorkload, *, preset: ResolvedPreset) -> NcuCaptured:
    """ncu into the run (report, log, version recorded), its report not read yet."""
    writer, say = cap.writer, cap.say
    say(f"[ncu] profiling {cap.kernel} ({workload.describe()}), preset {preset.name} ({preset.chip}) -> {writer.final}")
    t0 = time.time()
    ncu_run = run_ncu(cap.app, writer.path, ncu=exe, control=cap.control(), preset=preset)
    record_in_run(writer, ncu_run, preset.name)
    say(
        f"[ncu] done in {time.time() - t0:.1f} s: {len(ncu_run.passes)} launches profiled, "
        f"{max(ncu_run.passes, default=0)} replay passes each"
    )
    return NcuCaptured(cap, ncu_run, preset, t0)


def _read_ncu(report: Path, shown: Path, requested: list[str]) -> tuple[LaunchTable, list[str]]:
    """(the tidy launch table, the chip-specific metrics it lacks) from one read of the report: the
    metrics ncu was asked for (checked: profiler/ncu.py check_collected) and those the analysis reads."""
    try:
        raw = read_ncu_report(report, name=shown, metrics=[*requested, *raw_metrics()], pc_samples=True)
    except ReportError as exc:
        raise ReportError(one_line(str(exc))) from None
    absent = check_collected(raw, requested, shown)
    try:
        table = tidy_launches(raw)
    except ValueError as exc:  # e.g. ncu_tidy's UnitError: one clear line, as profiler/readers.py says it
        raise ReportError(one_line(f"{shown}: {KIND_NAMES[NCU_REP]} that cannot be read: {exc}")) from None
    table.frame["source"] = shown.name
    return dataclasses.replace(table, source=str(shown)), absent


def capture_nsys(cap: Capture, exe: str) -> NsysCapture:
    """nsys into the run: timeline report, sqlite export, logs, version; the timeline read once."""
    writer, say = cap.writer, cap.say
    say(f"[nsys] timeline of {cap.kernel} (-t cuda,nvtx) -> {writer.final}")
    t0 = time.time()
    nsys_run = run_nsys(cap.app, writer.path, nsys=exe, control=cap.control())
    writer.log_command(nsys_run.command)
    writer.log_command(nsys_run.export)
    writer.add_log(nsys_run.log)
    writer.add_log(nsys_run.export_log)
    writer.manifest.tools["nsys"] = {"path": exe, "version": nsys_version(exe)}
    writer.add_report(nsys_run.report, "nsys")
    timeline = read_nsys_sqlite(nsys_run.sqlite, name=cap.shown(nsys_run.sqlite))
    writer.add_report(nsys_run.sqlite, "nsys-sqlite", launches=timeline.summary["launches_in_range"])
    s = timeline.summary
    say(f"[nsys] done in {time.time() - t0:.1f} s: {s['steps']} steps, {s['launches_in_range']} launches in the range")
    return NsysCapture(nsys_run.report, nsys_run.sqlite, timeline, round(time.time() - t0, 1))


def nsys_left_out(writer: RunWriter, exc: ProfilerError) -> str:
    """Keep what a failed nsys left, named in the manifest (its logs; a raw .qdstrm stream, which
    `nsys import` can still turn into a report) and say in one line why the run has no timeline."""
    logs = [n for n in writer.keep_left_by("nsys") if n.endswith(".log")]
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        f"[nsys] no timeline: {first} (the ncu capture is complete; --tool both would have failed the run; "
        f"nsys's log: {', '.join(logs) or 'none'})"
    )


def round_command(app: list[str], samples: int, out: str | Path) -> list[str]:
    """One round of the timing pass: the harness command `app` (its `--iters ...` dropped) timing `samples`
    samples into `out`."""
    base = app[: app.index("--iters")] if "--iters" in app else list(app)
    return base + ["--timing-samples", str(samples), "--timing-out", str(out)]


def timed_rounds(
    app: list[str],
    rounds: int,
    samples: int,
    log: Path,
    control=None,
    say=print,
    start: str = "fork",
    server: AheadServer | None = None,
) -> TimingSamples:
    """`rounds` timing passes of the harness command `app` (its `--iters ...` dropped), each its own
    child process of `samples` samples, merged (profiler/timing.py: a round's samples share a process,
    so the spread of the rounds' medians is what varies between runs). The rounds' processes are forked
    from one server that imported torch but never started CUDA (`start` "fork", profiler/round_server.py)
    or each a fresh interpreter ("exec"); `server`: such a server started ahead (timing_server), whose
    output already goes to `log`. Every round's output goes to `log`."""
    got: list[TimingSamples] = []
    with tempfile.TemporaryDirectory(prefix="roofline-timing-") as tmp:
        outs = [Path(tmp) / f"round{i}.json" for i in range(rounds)]

        def said(i: int, last: str) -> None:
            say(f"[timing] round {i}/{rounds}: {last.removeprefix('harness: ')}")

        cmds = [round_command(app, samples, out) for out in outs]
        if server is not None:
            ran = server.run(cmds, control or PLAIN_RUN, said)
        else:
            ran = run_rounds(cmds, log, Path(tmp), control or PLAIN_RUN, said, start)
        for i, out in enumerate(outs, 1):
            if ran.failed == i or (ran.failed is None and not out.is_file()):
                raise ApplicationFailed(
                    f"the timing pass failed in round {i} of {rounds} (exit code {ran.returncode}); "
                    "--timing-samples 0 skips it",
                    ran.lines,
                    str(log),
                )
            try:
                data = json.loads(out.read_text())
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise RunDirError(f"{out} (round {i} of the timing pass): not valid JSON ({exc})") from None
            got.append(parse_timing(data, f"{out} (round {i} of the timing pass)"))
    return merge_rounds(got, ran.start)


def timing_server(cap: Capture, samples: int, scratch: Path) -> AheadServer | None:
    """The timing pass's round server, started now so that its imports (seconds: torch, triton, the kernel)
    run while the profilers capture; None where the rounds cannot be forked (profiler/round_server.py)."""
    if not samples:
        return None
    cmd = round_command(cap.app, samples, "timing-round.json")
    if not forkable([cmd]):
        return None
    return AheadServer(cmd[0], preloads(cmd), cap.writer.file("timing-log"), scratch, cap.env)


def timing_pass(
    cap: Capture,
    samples: int,
    device: str | None,
    rounds: int = DEFAULT_TIMING_ROUNDS,
    server: AheadServer | None = None,
) -> TimingPass:
    """The harness again, with no profiler attached: `rounds` child processes, `samples` timings of the
    step in all (split evenly over the rounds), into timing.json (a report of tool "timing" in the
    manifest). Skipped, with a note, when the captured child recorded no `device` in harness.json (a
    stand-in tool that never ran it). `server`: the round server timing_server started (its rounds run
    there), else one is started now."""
    if not device:
        if server is not None:
            server.end()
        note = f"no timing pass: the profiled child recorded no device in {HARNESS}; "
        note += "compare will gate on the profiler's times"
        return TimingPass(None, None, [note])
    writer, app, say = cap.writer, cap.app, cap.say
    out, log = writer.file("timing"), writer.file("timing-log")
    per_round = max(1, math.ceil(samples / rounds))
    say(
        f"[timing] {rounds} round(s) x {per_round} samples of {cap.kernel}'s step, each round its own process, "
        "no profiler attached (rotated inputs, CUDA graph)"
    )
    t0 = time.time()
    writer.log_command(round_command(app, per_round, "timing-round.json"))
    try:
        timing = timed_rounds(app, rounds, per_round, log, cap.control(), say, server=server)
    finally:
        if log.is_file():
            writer.add_log(log)
    write_timing(out, timing)
    writer.add_report(out, "timing")
    meds = timing.round_medians()
    say(
        f"[timing] done in {time.time() - t0:.1f} s: round medians {min(meds):.5f} .. {max(meds):.5f} ms "
        f"({(max(meds) / min(meds) - 1) * 100:.2f}% apart)"
    )
    return TimingPass(out, round(time.time() - t0, 1))
