"""timing.json: a run's timing samples, taken in child processes with no profiler attached.

    {"format": "roofline-timing/3", "method": "rotated", "unit": "ms per step",
     "rounds_ms": [[...], [...], ...], "round_kind": "process", "round_start": "fork", "samples_ms": [...all...],
     "clocks": [{...}, ...], "throttled_rounds": [{"round": 2, "why": ["sw power cap at end"]}],
     "n": 30, "input_sets": 8, "replays_per_sample": 4, ...}

A round is one child process: its samples share one process, one clock state and one memory
placement, so the spread between rounds' medians is what varies between runs (what `compare`'s
interval is built on). `round_start` says how the rounds' processes began: "fork" (forked from one
server that imported Python's libraries but never started CUDA: profiler/round_server.py) or "exec"
(a fresh interpreter each). `clocks` holds each round's GPU clocks at the start and end of its timed
samples (profiler/clocks.py), and `throttled_rounds` (derived from them) the rounds that ran below the
GPU's own clock. Format 2 has no clocks and no round_start (its rounds were exec'd); format 1 (one
list, `samples_ms`) is read as one round: within-run only.

Each sample is the mean time of one step over `replays_per_sample` replays of a CUDA graph that
runs the step once on each of `input_sets` independent input sets in turn (as a model's layers
each read their own KV cache; no L2 flush). Written by `python -m profiler.harness --timing-samples`,
named and checksummed by the run writer (tool "timing"), read back here. No torch needed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from profiler.clocks import UNRECORDED, ClockError, ClockRecord, parse_record
from profiler.rundir import TIMING, RunDir, RunDirError

FORMAT = "roofline-timing/3"
FORMATS = ("roofline-timing/1", "roofline-timing/2", FORMAT)  # 1: one round; 2: rounds, no clocks
ROUND_KINDS = {"process": "each round its own child process", "one": "one round (within-run only)"}
ROUND_STARTS = {"fork": "forked from a server that never started CUDA", "exec": "a fresh interpreter each"}
METHODS = {
    "rotated": "CUDA-graph replays over rotated input sets, no L2 flush",
    "flush": "triton.testing.do_bench: L2 flushed (256 MB zeroed) before each call",
}
# `roofline bench`'s ways to time a step (profiler/bench.py), each with what it is
BENCH_METHODS = {
    "rotated": METHODS["rotated"] + ", steps back to back",
    "flush": METHODS["flush"],
    "layered": "as rotated, with another layer's kernel after each step (an output projection's bf16 GEMM of the "
    "step's tokens, 16384 x 7168), as a model runs attention; the GEMMs' own time, timed alone, is taken out",
}


@dataclass(frozen=True)
class TimingSamples:
    samples_ms: tuple[float, ...]  # ms per step, one per sample (every round's, in order)
    method: str
    input_sets: int
    replays_per_sample: int
    kernel: str | None = None
    workload: dict | None = None
    host: dict = field(default_factory=dict)  # gpu, torch, triton, cuda
    kernels_ms: dict | None = None  # kernel name -> samples (ms per step), when taken
    rounds_ms: tuple[tuple[float, ...], ...] = ()  # the samples by round; () = one round
    round_kind: str = "one"  # process | one (ROUND_KINDS)
    round_start: str = "exec"  # fork | exec (ROUND_STARTS)
    clocks: tuple[ClockRecord, ...] = ()  # one per round (rounds); () = none recorded (timing.json: [])

    def round_clocks(self) -> list[ClockRecord]:
        """Each round's clock record (UNRECORDED for a timing written before clocks were recorded)."""
        return list(self.clocks) if self.clocks else [UNRECORDED] * len(self.rounds)

    def throttled_rounds(self) -> list[tuple[int, list[str]]]:
        """(round number from 1, why) of each round that ran below the GPU's own clock."""
        return [(i, c.throttled) for i, c in enumerate(self.round_clocks(), 1) if c.throttled]

    @property
    def n(self) -> int:
        return len(self.samples_ms)

    @property
    def rounds(self) -> tuple[tuple[float, ...], ...]:
        return self.rounds_ms or (self.samples_ms,)

    def round_medians(self) -> list[float]:
        return [statistics.median(r) for r in self.rounds]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["samples_ms"] = list(self.samples_ms)
        d["rounds_ms"] = [list(r) for r in self.rounds]
        d["clocks"] = [c.to_dict() for c in self.clocks]
        d["throttled_rounds"] = [{"round": i, "why": why} for i, why in self.throttled_rounds()]
        return {"format": FORMAT, "unit": "ms per step", "n": self.n, "method_text": METHODS.get(self.method), **d}


def merge_rounds(rounds: list[TimingSamples], start: str = "exec") -> TimingSamples:
    """One timing of several rounds, each a child process's TimingSamples (of one kernel and workload),
    their processes begun by `start` (ROUND_STARTS)."""
    if not rounds:
        raise ValueError("merge_rounds needs at least one round")
    first = rounds[0]
    for r in rounds[1:]:
        if (r.kernel, r.workload, r.method) != (first.kernel, first.workload, first.method):
            raise ValueError("merge_rounds: rounds of different kernels, workloads or methods")
    return dataclasses.replace(  # the first round's method, inputs, kernel, workload and host; every round's samples
        first,
        samples_ms=tuple(v for r in rounds for v in r.samples_ms),
        kernels_ms=None,
        rounds_ms=tuple(tuple(r.samples_ms) for r in rounds),
        round_kind="process" if len(rounds) > 1 else "one",
        round_start=start,
        clocks=tuple(c for r in rounds for c in r.round_clocks()) if any(r.clocks for r in rounds) else (),
    )


def _want(cond: bool, where: str, what: str, value) -> None:
    if not cond:
        raise RunDirError(f"{where}: {what}, got {json.dumps(value)[:80]}")


def _samples(values, where: str, name: str) -> tuple[float, ...]:
    _want(isinstance(values, list) and values != [], where, f"{name} must be a non-empty list of ms", values)
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values)
    _want(ok, where, f"{name} must hold positive finite numbers", values)
    return tuple(float(v) for v in values)


def parse_timing(data, where: str = TIMING) -> TimingSamples:
    """Validate a timing.json payload: one-line errors naming the file and the field."""
    _want(isinstance(data, dict), where, "must be a JSON object", type(data).__name__)
    fmt = data.get("format")
    _want(fmt in FORMATS, where, f"format must be one of {', '.join(FORMATS)}", fmt)
    samples = _samples(data.get("samples_ms"), where, "samples_ms")
    rounds: tuple[tuple[float, ...], ...] = ()
    kind = "one"
    if fmt != FORMATS[0]:
        raw = data.get("rounds_ms")
        _want(isinstance(raw, list) and raw != [], where, "rounds_ms must be a non-empty list of rounds", raw)
        rounds = tuple(_samples(r, where, f"rounds_ms[{i}]") for i, r in enumerate(raw))
        flat = tuple(v for r in rounds for v in r)
        _want(flat == samples, where, "samples_ms must be the rounds' samples in order", len(samples))
        kind = data.get("round_kind")
        _want(kind in ROUND_KINDS, where, f"round_kind must be one of {', '.join(ROUND_KINDS)}", kind)
        _want((kind == "one") == (len(rounds) == 1), where, "round_kind 'one' means exactly one round", kind)
        rounds = rounds if kind == "process" else ()  # one round: samples_ms is it
    start, clocks = "exec", ()
    if fmt == FORMAT:
        start = data.get("round_start")
        _want(start in ROUND_STARTS, where, f"round_start must be one of {', '.join(ROUND_STARTS)}", start)
        clocks = _clocks(data.get("clocks"), where, len(rounds) or 1)
    method = data.get("method")
    _want(method in METHODS, where, f"method must be one of {', '.join(METHODS)}", method)
    for key in ("input_sets", "replays_per_sample"):
        v = data.get(key)
        _want(isinstance(v, int) and not isinstance(v, bool) and v >= 1, where, f"{key} must be an integer >= 1", v)
    kernels = data.get("kernels_ms")
    _want(kernels is None or isinstance(kernels, dict), where, "kernels_ms must be an object", kernels)
    kernels_ms = (
        None if kernels is None else {str(k): _samples(v, where, f"kernels_ms[{k!r}]") for k, v in kernels.items()}
    )
    host = data.get("host") or {}
    _want(isinstance(host, dict), where, "host must be an object", host)
    return TimingSamples(
        samples_ms=samples,
        method=method,
        input_sets=data["input_sets"],
        replays_per_sample=data["replays_per_sample"],
        kernel=data.get("kernel"),
        workload=data.get("workload"),
        host=dict(host),
        kernels_ms=kernels_ms,
        rounds_ms=rounds,
        round_kind=kind,
        round_start=start,
        clocks=clocks,
    )


def _clocks(raw, where: str, rounds: int) -> tuple[ClockRecord, ...]:
    ok = isinstance(raw, list) and len(raw) in (0, rounds)
    _want(ok, where, f"clocks must be a list of {rounds} records (one a round) or empty", raw)
    try:
        return tuple(parse_record(c, f"{where}: clocks[{i}]") for i, c in enumerate(raw))
    except ClockError as exc:
        raise RunDirError(str(exc)) from None


def write_timing(path: str | Path, timing: TimingSamples) -> Path:
    path = Path(path)
    path.write_text(json.dumps(timing.to_dict(), indent=2) + "\n")
    return path


def read_timing(run: str | Path) -> TimingSamples | None:
    """The timing samples of a run directory (checked against the manifest's sha256); None when the
    run has none (taken with --timing-samples 0, or written before timing passes existed)."""
    files = RunDir(Path(run)).reports(tool="timing")
    if not files:
        return None
    try:
        data = json.loads(files[0].read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunDirError(f"{files[0]}: not valid JSON ({exc})") from None
    return parse_timing(data, str(files[0]))
