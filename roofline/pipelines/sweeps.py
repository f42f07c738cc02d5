"""A sweep: one `roofline.profile` run per point of a grid (kernel x ctx x page size x heads x q_len),
each in its own run directory under the sweep folder, named from its parameters so a rerun finds it
(`<kernel>-<ctx>-h<heads>-q<q>-p<page>`). The folder's files are named and read by its owner,
roofline/pipelines/sweep_dir.py `SweepDir`: sweep.json, summary.csv, the chart, each point's run directory and
the failed attempts the run writer kept beside it.

Resumable: a point whose folder is a complete run (its manifest says so, its reports match their
checksums, its spec is this point) is kept and skipped; failed and interrupted points run again.
A failure is recorded and the sweep goes on; Ctrl-C stops it, keeping every finished point.

Each point is one independent command (`roofline sweep --print-commands` prints each: a `roofline
profile ... --out SWEEP/<point>`, built by the CLI from its own options and carried by the point as
`SweepPoint.command`), so a scheduler's job array can run the points and `summarize` reads the folder.
With several GPUs, one worker process per GPU (CUDA_VISIBLE_DEVICES set for the profiled child)
takes points from a shared queue; only the parent writes sweep.json.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import queue
import re
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from kernels.batches import drawn, make_workload
from kernels.spec import VerifyWorkload
from profiler.errors import CounterPermission, ToolNotFound
from profiler.metrics import DEFAULT_PRESET
from profiler.ncu import find_ncu
from profiler.rundir import RunDir, RunDirError, run_name
from roofline.pipelines.profiling import profile
from roofline.pipelines.request import ProfileRequest
from roofline.pipelines.sweep_dir import SweepDir, SweepError
from roofline.pipelines.sweep_summary import RESULT_FIELDS, point_numbers, summarize  # noqa: F401 - summarize: the API

POINT_TOOL = "ncu"  # each point's counters; the timeline is not taken in a sweep
EVERY_POINT = (ToolNotFound, CounterPermission)  # failures every later point would repeat: the sweep stops
# what every point of a sweep shares unless asked otherwise; each point's kernel and workload replace these
POINT_REQUEST = ProfileRequest(tool=POINT_TOOL, preset=DEFAULT_PRESET)


@dataclass(frozen=True)
class SweepPoint:
    kernel: str
    workload: VerifyWorkload
    command: tuple[str, ...] = ()  # the command line that makes this point on its own (the CLI's words)

    @property
    def name(self) -> str:
        return run_name(self.kernel, self.workload)

    def request(self, settings: ProfileRequest = POINT_REQUEST) -> ProfileRequest:
        """The profile of this point: its kernel and workload with the sweep's `settings`."""
        return settings.replace(kernel=self.kernel, workload=self.workload)


def plan(
    kernels: list[str],
    ctx_lens: list[int],
    page_sizes: list[int],
    heads: list[int] = (8,),
    q_lens: list[int] = (9,),
    batch: int | None = 1,
    lens: list[str] = (),
    seed: int = 0,
    masks: list[str] = ("tree",),
) -> list[SweepPoint]:
    """Every point of the grid, kernel-major then mask, heads, q_len, page size, context length: `batch` equal
    requests at each of `ctx_lens`, or, where `lens` is given, each of those batches (kernels/batches.py's
    text, drawn with `batch` and `seed`) in place of the context lengths. WorkloadError for a batch that
    cannot be made."""
    sizes = (
        [dict(lens=text, batch=batch if drawn(text) else None, seed=seed) for text in lens]
        if lens
        else [dict(ctx=c, batch=batch or 1) for c in ctx_lens]
    )
    points = [
        SweepPoint(k, make_workload(**size, page_size=p, heads=h, q_len=q, tree_mask=m))
        for k, m, h, q, p, size in itertools.product(kernels, masks, heads, q_lens, page_sizes, sizes)
    ]
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise SweepError("the grid repeats a point (a value given twice?)")
    return points


@dataclass
class PointResult:
    name: str
    kernel: str
    workload: dict
    status: str  # done | kept | failed | interrupted
    error: str | None = None
    kept_at: str | None = None  # where a failed or interrupted attempt's capture went
    gpu: str | None = None
    wall_s: float | None = None
    finished: str | None = None
    step_ms: float | None = None  # a done point's numbers, so sweep.json alone can be summarized
    floor_ms: float | None = None
    gap: float | None = None
    bound: str | None = None
    stops: bool = False  # a failure every later point would repeat (no ncu, no counter permission)
    exit_code: int | None = None  # an interrupted point's: 130 for Ctrl-C, 128 + the signal's number

    @property
    def ok(self) -> bool:
        return self.status in ("done", "kept")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------------------
# sweep.json's entries (the parent alone writes the file, through SweepDir)


def record(state: dict, result: PointResult) -> None:
    entry = asdict(result)
    for key in ("name", "stops", "exit_code"):  # how this command ends, not the point's record
        entry.pop(key)
    if result.status == "kept":  # keep what the run that made it said (GPU, wall time)
        old = state["points"].get(result.name, {})
        entry.update({k: old.get(k) for k in ("gpu", "wall_s", "finished", *RESULT_FIELDS) if old.get(k) is not None})
        entry["status"] = "done"
    state["points"][result.name] = entry


# ---------------------------------------------------------------------------------------------
# one point


def finished(point: SweepPoint, sweep: SweepDir) -> bool:
    """True when the point's folder is a complete run of this point; False when there is none.
    Raises SweepError when the folder holds something else (it is never overwritten)."""
    path = sweep.point(point.name)
    if not path.exists():
        return False
    if not RunDir.is_run(path):
        raise SweepError(f"{path}: exists and is not a run directory; move it away to run this point")
    run = RunDir(path)
    try:
        run.reports()  # complete, and its reports match their checksums
        spec = run.spec()
    except RunDirError as exc:
        raise SweepError(f"{exc}; move it away to run this point again") from None
    want = point.workload.to_dict()
    if spec is None or spec.kernel != point.kernel or {**spec.workload, "seed": 0} != {**want, "seed": 0}:
        raise SweepError(f"{path}: holds a run of another kernel or workload; move it away to run this point")
    return True


_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt)\b:?.*")


def _program_error(lines: list[str]) -> str | None:
    """The profiled program's own last exception line in the tool's log (`ValueError: ...`)."""
    hits = [ln.strip() for ln in lines if _EXCEPTION_LINE.match(ln) and not ln.startswith("==")]
    return hits[-1][:200] if hits else None


def run_point(
    point: SweepPoint, sweep: SweepDir, settings: ProfileRequest = POINT_REQUEST, gpu: str | None = None
) -> PointResult:
    """Profile one point with the sweep's `settings` into SWEEP/<point>; never raises for the point's own failure
    or Ctrl-C (a failure every point would repeat, EVERY_POINT, comes back with `stops` set)."""
    started = time.time()
    base = dict(name=point.name, kernel=point.kernel, workload=point.workload.to_dict(), gpu=gpu)
    env = {"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else None
    try:
        run = profile(
            point.request(settings), out=sweep.point(point.name), env=env, command=list(point.command) or None
        )
    except KeyboardInterrupt as exc:
        kept = getattr(exc, "kept_at", None)
        return PointResult(
            **base,
            status="interrupted",
            exit_code=getattr(exc, "exit_code", 130),
            error=f"interrupted ({getattr(exc, 'how', 'Ctrl-C')})",
            kept_at=str(kept) if kept else None,
            wall_s=round(time.time() - started, 1),
            finished=_now(),
        )
    except Exception as exc:  # noqa: BLE001 - a point's failure is recorded, the sweep goes on
        kept = getattr(exc, "kept_at", None)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        cause = _program_error(getattr(exc.__cause__ or exc, "log_lines", []))
        if cause and cause not in first:
            first += f": {cause}"
        return PointResult(
            **base,
            status="failed",
            stops=isinstance(exc, EVERY_POINT) or isinstance(exc.__cause__, EVERY_POINT),  # kept runs: the cause
            error=first,
            kept_at=str(kept) if kept else None,
            wall_s=round(time.time() - started, 1),
            finished=_now(),
        )
    return PointResult(
        **base, status="done", wall_s=round(time.time() - started, 1), finished=_now(), **point_numbers(run)
    )


# ---------------------------------------------------------------------------------------------
# the sweep


@dataclass
class SweepOutcome:
    sweep_dir: Path
    results: list[PointResult] = field(default_factory=list)
    interrupted: bool = False
    exit_code: int = 130  # when interrupted: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
    stopped: PointResult | None = None  # the failure that stopped the sweep (EVERY_POINT)

    def count(self, *statuses: str) -> int:
        return sum(r.status in statuses for r in self.results)


def _first_interrupt_only(signum, frame):
    """In a worker: the first SIGINT stops the point in flight; later ones (the parent forwards the
    user's Ctrl-C) are ignored, so the failed attempt is kept cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _worker(gpu: str, tasks, results, sweep: SweepDir, settings: ProfileRequest) -> None:
    signal.signal(signal.SIGINT, _first_interrupt_only)
    try:
        while True:
            point = tasks.get()
            if point is None:
                return
            results.put(("start", point.name, gpu))
            result = run_point(point, sweep, settings, gpu=gpu)
            results.put(("done", result, gpu))
            if result.status == "interrupted" or result.stops:
                return
    except KeyboardInterrupt:
        return


def run_sweep(
    points: list[SweepPoint],
    sweep_dir: str | Path,
    settings: ProfileRequest = POINT_REQUEST,
    gpus: list[str] | None = None,
    command: str | None = None,
    on_start: Callable[[SweepPoint, str | None], None] | None = None,
    on_done: Callable[[PointResult], None] | None = None,
) -> SweepOutcome:
    """Run every point not already finished, each profiled with `settings` (its kernel and workload the
    point's); record each in sweep.json as it ends.

    gpus: None runs the points one after another on whatever GPU the child sees; one GPU pins
    them to it; several start one worker process per GPU. Ctrl-C, SIGTERM or SIGHUP (inside
    profiler.proc.stop_signals_interrupt) returns with `interrupted` and the signal's `exit_code`. No ncu
    is one error before anything is made (ToolNotFound); a failure every point would repeat (no counter
    permission) stops the sweep at the first point, the rest left pending. The folder is held for the
    whole sweep (SweepDir.lock): a second sweep into it is refused."""
    if settings.tool in (None, "ncu", "both"):  # a point runs ncu: without it, one error and no folder
        find_ncu(settings.ncu)
    sweep = SweepDir.create(sweep_dir)
    with sweep.lock():
        return _run_points(points, sweep, command, on_start, on_done, settings, gpus)


def _run_points(points, sweep, command, on_start, on_done, settings: ProfileRequest, gpus) -> SweepOutcome:
    state = sweep.state()
    if command:
        state["command"] = command
    outcome = SweepOutcome(sweep.path)
    by_name = {p.name: p for p in points}

    def done(result: PointResult) -> None:
        outcome.results.append(result)
        record(state, result)
        sweep.write_state(state)
        if result.status == "interrupted":
            outcome.interrupted = True
            outcome.exit_code = result.exit_code or outcome.exit_code
        if result.stops and outcome.stopped is None:
            outcome.stopped = result
        if on_done:
            on_done(result)

    todo = []
    for p in points:
        try:
            if finished(p, sweep):
                done(PointResult(p.name, p.kernel, p.workload.to_dict(), "kept"))
                continue
        except SweepError as exc:
            done(PointResult(p.name, p.kernel, p.workload.to_dict(), "failed", error=str(exc)))
            continue
        todo.append(p)
        state["points"].setdefault(p.name, {"kernel": p.kernel, "workload": p.workload.to_dict(), "status": "pending"})
    sweep.write_state(state)
    if not todo:
        return outcome
    if not gpus or len(gpus) == 1:
        gpu = gpus[0] if gpus else None
        try:
            for p in todo:
                if on_start:
                    on_start(p, gpu)
                result = run_point(p, sweep, settings, gpu=gpu)
                done(result)
                if result.status == "interrupted" or result.stops:
                    break
        except KeyboardInterrupt as exc:
            outcome.interrupted = True
            outcome.exit_code = getattr(exc, "exit_code", 130)
        return outcome
    _run_parallel(todo, by_name, sweep, settings, gpus, outcome, done, on_start)
    return outcome


def _run_parallel(todo, by_name, sweep, settings, gpus, outcome, done, on_start) -> None:
    ctx = mp.get_context("spawn")  # no fork of a process that may hold threads
    tasks, results = ctx.Queue(), ctx.Queue()
    tasks.cancel_join_thread()  # points left in the queue after Ctrl-C must not hold up our exit
    for p in todo:
        tasks.put(p)
    for _ in gpus:
        tasks.put(None)
    # not daemonic: a worker reads each report in a child process of its own (profiler/ncu_reader.py),
    # which a daemonic process may not start; the workers are joined (or ended) below in every case
    workers = [
        ctx.Process(
            target=_worker,
            args=(g, tasks, results, sweep, settings),
            name=f"roofline-sweep-gpu{g}",
            daemon=False,
        )
        for g in gpus
    ]
    for w in workers:
        w.start()
    try:
        in_flight: dict[str, str] = {}
        remaining = len(todo)

        def drain(block_s: float) -> bool:
            nonlocal remaining
            try:
                msg = results.get(timeout=block_s)
            except queue.Empty:
                return False
            if msg[0] == "start":
                in_flight[msg[1]] = msg[2]
                if on_start:
                    on_start(by_name[msg[1]], msg[2])
            else:
                in_flight.pop(msg[1].name, None)
                remaining -= 1
                done(msg[1])
            return True

        try:
            while remaining and (any(w.is_alive() for w in workers) or not results.empty()):
                drain(0.5)
                if outcome.stopped is not None:  # every other point would fail the same way
                    raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            outcome.interrupted = outcome.stopped is None
            outcome.exit_code = getattr(exc, "exit_code", 130)
            for w in workers:  # when only this process got the signal, pass it on; workers ignore a second
                if w.is_alive() and w.pid:
                    os.kill(w.pid, signal.SIGINT)
        if outcome.interrupted or outcome.stopped is not None:
            try:  # let the points in flight keep what they captured and say so
                deadline = time.time() + 60
                while (
                    in_flight and time.time() < deadline and (any(w.is_alive() for w in workers) or not results.empty())
                ):
                    drain(0.5)
            except KeyboardInterrupt:
                pass
        for name, gpu in list(in_flight.items()):  # a worker that died without a word
            p = by_name[name]
            status = "interrupted" if outcome.interrupted or outcome.stopped is not None else "failed"
            done(
                PointResult(
                    name,
                    p.kernel,
                    p.workload.to_dict(),
                    status,
                    gpu=gpu,
                    error="interrupted (Ctrl-C)" if outcome.interrupted else "the worker process died",
                )
            )
    finally:  # whatever happened, no worker outlives the sweep
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()


# ---------------------------------------------------------------------------------------------
