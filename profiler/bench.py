"""Time kernels on the GPU with CUDA events, and measure this GPU's ceilings in the same run.
Needs torch + a GPU.

Two methods for a kernel's step:
- "rotated" (the default): CUDA-graph replays of the step over several independent input sets
  in turn, no L2 flush, many samples (`rotated_samples_ms`): what a model's layers see, each
  reading its own KV cache.
- "flush": triton.testing.do_bench (warm-up, L2 flushed before each repeat, median). Its flush
  zeroes 256 MB, and the dirty lines are written back during the timed kernel (on the H200 a
  151 MB read takes 57.0 us after it, 48.3 us with rotated inputs).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import torch
import triton
import triton.testing

from kernels.batches import BenchPoint
from kernels.graph import GraphedKernel
from kernels.inputs import VerifyInputs, build_inputs
from kernels.launch_spec import device_facts
from kernels.probes import make_l2_reread
from kernels.registry import check_workload, get_kernel
from kernels.spec import VerifyWorkload, WorkloadError
from kernels.stream import stream_read
from profiler.clocks import ClockRecord, ClockSampler, row_columns
from profiler.timing import BENCH_METHODS

METHODS = tuple(BENCH_METHODS)
DEFAULT_SAMPLES = 30
# the "layered" method's kernel between steps: an MLA model's output projection, heads x v_head
# (128 x 128) to the hidden size, in bf16: a 235 MB weight
LAYER_K, LAYER_N = 16384, 7168


@dataclass(frozen=True)
class MeasuredCeilings:
    device: str
    copy_gbps: float  # device-to-device copy, bytes read + written
    read_gbps: float  # a streaming read, each byte once
    matmul_tflops: float  # bf16 8192^3 through torch
    l2_read_gbps: float | None = None  # a 16 MiB buffer re-read from L2 (no flush between calls)


def median_ms(fn, warmup_ms: int = 25, rep_ms: int = 200) -> float:
    return float(triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def graph_replay_ms(fn, warmup_ms: int = 10, rep_ms: int = 60) -> float:
    """Median ms of one CUDA-graph replay of `fn`'s launches (no host launch cost); `fn` runs once
    first, outside the capture, so that it compiles there."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return median_ms(graph.replay, warmup_ms, rep_ms)


@dataclass(frozen=True)
class RotatedTiming:
    samples_ms: list[float]  # ms per step, one per sample
    input_sets: int
    replays_per_sample: int
    clocks: ClockRecord | None = None  # the GPU's clocks as the samples began and ended, when a sampler was given
    layer_ms: float | None = None  # layered_samples_ms: the median of the kernel between steps, timed alone


@dataclass(frozen=True)
class Timed:
    """One bench row's time: the median ms per step and the GPU's clocks while it was timed."""

    median_ms: float
    clocks: ClockRecord | None = None
    layer_ms: float | None = None  # "layered": the median of the kernel between steps, timed alone


def input_sets_for(set_bytes: int, l2_bytes: int, least: int = 4, most: int = 64) -> int:
    """How many input sets to cycle: together at least 4x the L2 (so a set has left the L2 by the
    time it is read again), and never fewer than `least`."""
    return max(least, min(most, math.ceil(4 * l2_bytes / max(set_bytes, 1))))


def inputs_bytes(inp: VerifyInputs) -> int:
    return sum(t.numel() * t.element_size() for t in (inp.q, inp.kv_cache, inp.page_table, inp.token_slots))


def rotated_input_sets(
    workload: VerifyWorkload, count: int | None = None, seed: int | None = None
) -> list[VerifyInputs]:
    """`count` independent input sets for `workload` (seeds seed, seed+1, ...; default the workload's);
    None: as many as input_sets_for this GPU's L2."""
    first = workload.seed if seed is None else seed
    sets = [build_inputs(dataclasses.replace(workload, seed=first), device="cuda")]
    if count is None:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
        count = input_sets_for(inputs_bytes(sets[0]), l2)
    sets += [build_inputs(dataclasses.replace(workload, seed=first + i), device="cuda") for i in range(1, count)]
    return sets


def rotated_samples_ms(
    call,
    input_sets: list,
    samples: int = DEFAULT_SAMPLES,
    sample_ms: float = 2.0,
    warmup_ms: float = 25.0,
    clocks: ClockSampler | None = None,
) -> RotatedTiming:
    """`samples` timings of one step, in ms: a CUDA graph runs `call(inp)` once on each input set in
    turn; a sample is `replays` back-to-back replays of it between two events (enough for about
    `sample_ms`), divided by the steps it ran, after about `warmup_ms` of replays untimed. No L2
    flush: the sets rotate through the L2. `clocks`: read the GPU's clocks as the samples are queued
    (the warm-up replays in flight) and before the wait for the last (the samples in flight)."""
    for inp in input_sets:  # compile, and allocate outside the capture
        call(inp)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for inp in input_sets:
            call(inp)
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    torch.cuda.synchronize()
    one_ms = max(start.elapsed_time(end), 1e-3)
    for _ in range(math.ceil(warmup_ms / one_ms)):
        graph.replay()
    replays = max(1, math.ceil(sample_ms / one_ms))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(samples)]
    first = clocks.sample() if clocks else None
    for s, e in events:
        s.record()
        for _ in range(replays):
            graph.replay()
        e.record()
    last = clocks.sample() if clocks else None
    torch.cuda.synchronize()
    steps = replays * len(input_sets)
    record = clocks.record(first, last) if clocks else None
    return RotatedTiming([s.elapsed_time(e) / steps for s, e in events], len(input_sets), replays, record)


def layer_gemm(workload: VerifyWorkload) -> Callable[[], torch.Tensor]:
    """The "layered" method's kernel between steps: the bf16 GEMM of an output projection (LAYER_K x LAYER_N)
    over the step's tokens (batch x q_len rows), into one output buffer. Its weight is several times the L2,
    so each step also starts on an L2 another kernel has filled, as in a model."""
    x = torch.randn(workload.batch * workload.q_len, LAYER_K, device="cuda", dtype=torch.bfloat16)
    weight = torch.randn(LAYER_K, LAYER_N, device="cuda", dtype=torch.bfloat16) / LAYER_K**0.5
    out = torch.empty(x.shape[0], LAYER_N, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.matmul(x, weight, out=out)


def layered_samples_ms(
    call,
    input_sets: list,
    layer: Callable[[], object],
    samples: int = DEFAULT_SAMPLES,
    clocks: ClockSampler | None = None,
) -> RotatedTiming:
    """rotated_samples_ms of `call(inp)` followed by `layer()` in each step, less the median of the same graph
    with the layers alone: each sample is the step's own time with another kernel before and after it."""
    both = rotated_samples_ms(lambda inp: (call(inp), layer()), input_sets, samples, clocks=clocks)
    alone = rotated_samples_ms(lambda inp: layer(), input_sets, samples)
    layer_ms = float(pd.Series(alone.samples_ms).median())
    return dataclasses.replace(both, samples_ms=[ms - layer_ms for ms in both.samples_ms], layer_ms=layer_ms)


def time_step(
    name: str,
    workload: VerifyWorkload,
    samples: int = DEFAULT_SAMPLES,
    seed: int | None = None,
    input_sets: int | None = None,
    then: Callable[[], object] | None = None,
    clocks: ClockSampler | None = None,
    layered: bool = False,
    **kernel_kwargs,
) -> RotatedTiming:
    """Samples of kernel `name`'s step on `workload`, rotated over fresh input sets (seeds from `seed`).
    `then`: launched after each step, inside the graph (roofline/pipelines/gate.py's known slowdown);
    `clocks`: the GPU's clocks recorded around the samples (rotated_samples_ms); `layered`: another
    layer's kernel between steps, its own time taken out (layered_samples_ms)."""
    fn = get_kernel(name).load()
    if isinstance(fn, GraphedKernel):  # its own graph per step: ours holds the same launches for every set
        fn = fn.fn

    def step(inp):
        fn(inp, **kernel_kwargs)
        if then is not None:
            then()

    return _on_rotated_sets(step, workload, layered, samples, clocks, input_sets, seed)


def _on_rotated_sets(
    call,
    workload: VerifyWorkload,
    layered: bool,
    samples: int = DEFAULT_SAMPLES,
    clocks: ClockSampler | None = None,
    count: int | None = None,
    seed: int | None = None,
) -> RotatedTiming:
    """Samples of `call(inp)` over fresh rotated input sets for `workload` (rotated_input_sets' `count` and
    `seed`): back to back (rotated_samples_ms), or with layer_gemm between steps (layered_samples_ms). The
    sets are freed after."""
    sets = rotated_input_sets(workload, count, seed)
    try:
        if layered:
            return layered_samples_ms(call, sets, layer_gemm(workload), samples, clocks=clocks)
        return rotated_samples_ms(call, sets, samples, clocks=clocks)
    finally:
        del sets
        torch.cuda.empty_cache()


def measure_ceilings(gib: float = 4.0) -> MeasuredCeilings:
    """Copy and read a `gib` GiB buffer (many times L2), and a large bf16 matmul."""
    n = int(gib * 2**30) // 2
    a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a))
    read_ms = median_ms(lambda: stream_read(a))
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    mm_ms = median_ms(lambda: x @ y)
    return MeasuredCeilings(
        device=device_facts("cuda")[0],
        copy_gbps=2 * a.numel() * 2 / (copy_ms * 1e-3) / 1e9,
        read_gbps=a.numel() * 2 / (read_ms * 1e-3) / 1e9,
        matmul_tflops=2 * 8192**3 / (mm_ms * 1e-3) / 1e12,
        l2_read_gbps=measure_l2_read(),
    )


def measure_l2_read(calls: int = 20) -> float:
    """GB/s of the L2-resident re-read probe, timed with events over back-to-back calls (no flush)."""
    run = make_l2_reread("cuda")
    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        run()
    end.record()
    torch.cuda.synchronize()
    return run.bytes_read * calls / (start.elapsed_time(end) * 1e-3) / 1e9


def _time_call(fn, inp, kwargs: dict, rep_ms: int = 200) -> float:
    fn(inp, **kwargs)  # compile outside the timing
    torch.cuda.synchronize()
    return median_ms(lambda: fn(inp, **kwargs), rep_ms=rep_ms)


def _rotated(t: RotatedTiming) -> Timed:
    return Timed(float(pd.Series(t.samples_ms).median()), t.clocks, t.layer_ms)


def _flushed(time_it: Callable[[], float], clocks: ClockSampler | None) -> Timed:
    """do_bench's median, the clocks read just before and after it (do_bench leaves the GPU idle between)."""
    first = clocks.sample() if clocks else None
    ms = time_it()
    return Timed(ms, clocks.record(first, clocks.sample()) if clocks else None)


def time_kernel(
    name: str, workload: VerifyWorkload, method: str = "rotated", clocks: ClockSampler | None = None, **kernel_kwargs
) -> Timed:
    """Median milliseconds of one step of kernel `name` on fresh inputs for `workload`, by `method`
    ("rotated": CUDA-graph replays over rotated input sets; "layered": the same with another layer's kernel
    between steps; "flush": do_bench with its L2 flush), with the GPU's clocks while it ran when `clocks`
    is given."""
    if method in ("rotated", "layered"):
        return _rotated(time_step(name, workload, clocks=clocks, layered=method == "layered", **kernel_kwargs))
    if method != "flush":
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    fn, inp = get_kernel(name).load(), build_inputs(workload, device="cuda")
    return _flushed(lambda: _time_call(fn, inp, kernel_kwargs), clocks)


READ = "read"  # bench's pseudo-kernel: a bare stream_read of the workload's KV bytes, nothing else


def read_kv(inp) -> torch.Tensor:
    """A bare read of the inputs' KV bytes: kernels.stream.stream_read over the cache's used tokens."""
    w = inp.workload
    return stream_read(inp.kv_cache.view(-1)[: w.kv_tokens * w.head_dim])


def time_read(workload: VerifyWorkload, method: str = "rotated", clocks: ClockSampler | None = None) -> Timed:
    """Median ms of a bare read of `workload`'s KV bytes (read_kv), timed like the kernels: what any
    kernel of this workload pays for its bytes alone."""
    if method == "flush":
        inp = build_inputs(workload, device="cuda")
        read_kv(inp)
        torch.cuda.synchronize()
        return _flushed(lambda: median_ms(lambda: read_kv(inp)), clocks)
    return _rotated(_on_rotated_sets(read_kv, workload, method == "layered", clocks=clocks))


def launch_params(name: str) -> tuple[str, dict]:
    """A bench kernel name and the launch parameters it carries: `triton_mla_fast_graph:schedule=uniform` ->
    ("triton_mla_fast_graph", {"schedule": "uniform"}); numbers and true/false are read as such. The
    parameters go to the kernel's call (triton_mla_fast's FastConfig fields)."""
    base, sep, rest = name.partition(":")
    params: dict = {}
    for part in rest.split(",") if sep else []:
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ValueError(f"{name}: launch parameters are KEY=VALUE, comma-separated (e.g. {base}:schedule=uniform)")
        params[key.strip()] = _param_value(value.strip())
    return base, params


def _param_value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def skip_reason(name: str, workload: VerifyWorkload) -> str | None:
    """Why kernel `name` does not run `workload` (a mask or page size it lacks, not built), or None."""

    name, _ = launch_params(name)
    if name == READ:
        return None
    info = get_kernel(name)
    problem = info.unavailable() or info.unsupported(workload)
    if problem:
        return problem
    try:
        check_workload(name, workload)
    except WorkloadError as exc:
        return str(exc)
    return None


def bench_grid(
    kernels: list[str],
    ctx_lens: list[int],
    page_sizes: list[int],
    heads: list[int],
    q_len: int = 9,
    batch: int = 1,
    progress=None,
    method: str = "rotated",
    masks: tuple[str, ...] = ("tree",),
) -> pd.DataFrame:
    """bench_points over every ctx_len x page_size x heads x mask (`batch` equal requests each)."""
    points = [
        BenchPoint(VerifyWorkload(ctx_len=ctx, heads=h, q_len=q_len, page_size=ps, batch=batch, tree_mask=mask))
        for mask, h, ps, ctx in itertools.product(masks, heads, page_sizes, ctx_lens)
    ]
    return bench_points(kernels, points, progress, method)


def bench_points(
    kernels: list[str],
    points: list[BenchPoint],
    progress=None,
    method: str = "rotated",
    clocks: ClockSampler | None = None,
) -> pd.DataFrame:
    """One row per point x kernel: median_ms by `method` (NaN with `error` on failure), and the GPU's clocks
    while it was timed (profiler/clocks.py row_columns; `clocks`: the sampler, a new one when None). A point
    a kernel cannot run (FlashMLA at page 1 or with a tree mask) is kept as a row whose error says "skipped: why".
    The kernel name `read` (READ) times a bare read of the point's KV bytes; `name:key=value,...` passes
    launch parameters to the kernel (launch_params). A ragged batch's lengths are in `ctx_lens` (comma-joined,
    exact), its largest in `ctx_len`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    rows = []
    clocks = clocks or ClockSampler()
    cases = [(p, name) for p in points for name in kernels]
    for n, (point, name) in enumerate(cases, 1):
        w = point.workload
        row = {
            "kernel": name,
            "row": point.row,
            "lens": point.lens,
            "ctx_len": w.ctx_len,
            "ctx_lens": ",".join(map(str, w.ctx_lens)) if w.ctx_lens is not None else "",
            "page_size": w.page_size,
            "heads": w.heads,
            "q_len": w.q_len,
            "batch": w.batch,
            "mask": w.tree_mask,
            "median_ms": float("nan"),
            "error": "",
            **row_columns(None),
        }
        why = skip_reason(name, w)
        if why:
            row["error"] = f"skipped: {why}"[:200]
        else:
            base, params = launch_params(name)
            try:
                t = time_read(w, method, clocks) if base == READ else time_kernel(base, w, method, clocks, **params)
                row.update(median_ms=t.median_ms, **row_columns(t.clocks))
                if t.layer_ms is not None:
                    row["layer_ms"] = t.layer_ms
            except Exception as exc:  # keep going: one failing case must not lose the table
                row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        rows.append(row)
        if progress:
            where = point.row or f"ctx={w.ctx_len}" + (f" batch={w.batch}" if w.batch != 1 else "")
            progress(
                f"[{n}/{len(cases)}] {name} {where} page={w.page_size} heads={w.heads} q_len={w.q_len} "
                f"mask={w.tree_mask}: "
                + (f"{row['median_ms']:.4f} ms" if not row["error"] else row["error"])
                + (f" (THROTTLED: {row['throttled']})" if row["throttled"] else "")
            )
        torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def tune(name: str, workload: VerifyWorkload, space: dict[str, list], progress=None) -> pd.DataFrame:
    """Median ms of every combination of kernel keyword arguments in `space` (failures kept)."""
    fn = get_kernel(name).load()
    inp = build_inputs(workload, device="cuda")
    keys = list(space)
    rows = []
    for values in itertools.product(*(space[k] for k in keys)):
        kw = dict(zip(keys, values))
        try:
            ms = _time_call(fn, inp, kw, rep_ms=100)
        except Exception as exc:
            ms = float("nan")
            print(f"tune: {kw}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
        rows.append({**kw, "median_ms": ms})
        if progress:
            progress(f"tune {name} {workload.describe()} {kw}: {ms:.4f} ms")
    return pd.DataFrame(rows).sort_values("median_ms")
