"""`roofline bench`: every kernel timed on this GPU against the floor, and each one's fixed + bytes / rate fit;
with `--serving`, the serving rows (ragged and skewed batches beside a bare read of their bytes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kernels.batches import SERVING, SERVING_MASK, SERVING_PAGE_SIZE
from kernels.errors import RooflineError
from kernels.fast.common import CONFIG_KEYS
from kernels.registry import get_kernel
from kernels.spec import WorkloadError, parse_ctx_len
from profiler.proc import stop_signals_interrupt
from profiler.timing import BENCH_METHODS
from reports.serving import render_serving_text
from reports.text import render_bench
from roofline.cli.common import (
    BadInputExit,
    comma_list,
    echo_json,
    force_option,
    format_option,
    need_kernels,
    out_option,
    progress,
)
from roofline.cli.common import fail as _fail
from roofline.cli.options import GRID_OPTIONS, grid_lists, grid_options
from roofline.pipelines.benching import bench_outputs, grid_points, lens_points, read_bench, run_bench, serving_points

SERVING_KERNELS = "read,flashmla,triton_mla_fast_graph"
GRID_KERNELS = "triton_mla,triton_mla_decode,triton_mla_fast"


FAST_LAUNCH_KEYS = (*CONFIG_KEYS, "split_len", "min_split_len", "path")  # triton_mla_fast's call (kernels/fast/run.py)


def _bench_kernel(name: str) -> str:
    """A registered kernel, or `read` (a bare read of each point's KV bytes), with launch parameters after
    a colon where given (`triton_mla_fast_graph:schedule=uniform`: profiler.bench.launch_params)."""
    from profiler.bench import launch_params  # lazy: profiler.bench imports torch

    base, params = launch_params(name)
    base = base if base == "read" else get_kernel(base).name
    if params and base == "read":
        raise ValueError(f"{name}: a bare read takes no launch parameters")
    if base.removesuffix("_graph") == "triton_mla_fast" and (unknown := sorted(set(params) - set(FAST_LAUNCH_KEYS))):
        raise ValueError(
            f"{name}: {base} has no launch parameter {', '.join(unknown)} (kernels.fast.common.FastConfig)"
        )
    return base + name[len(name.partition(":")[0]) :]


@click.command("bench")
@click.option(
    "--kernel",
    "kernel_list",
    default=None,
    help=f"comma list [default: {GRID_KERNELS}; with --serving {SERVING_KERNELS}]; `read` times a bare read of "
    "each point's KV bytes; KERNEL:KEY=VALUE passes launch parameters (triton_mla_fast_graph:schedule=uniform: "
    "the fast kernel's grid before the batch schedule)",
)
@grid_options(ctx="8k,32k,128k,256k", heads="8,64")
@click.option(
    "--serving",
    is_flag=True,
    help="the serving rows instead of a grid: "
    + "; ".join(
        f"{r.name} ({r.lens}{f' x {r.batch}' if r.batch else ''}, {r.heads} heads, q_len {r.q_len})" for r in SERVING
    )
    + f"; page {SERVING_PAGE_SIZE}, {SERVING_MASK} mask",
)
@out_option("out_dir", "the bench folder (bench.csv, bench.json)", default="runs/bench", folder=True)
@force_option
@click.option(
    "--from",
    "from_json",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="re-read a saved bench.json instead (no GPU; the other options are not used)",
)
@click.option(
    "--method",
    type=click.Choice(list(BENCH_METHODS)),
    default="rotated",
    show_default=True,
    help="; ".join(f"{name}: {text}" for name, text in BENCH_METHODS.items()),
)
@format_option()
def bench_cmd(kernel_list, serving, out_dir, force, from_json, method, fmt, **grid) -> None:
    """Time every kernel x ctx x page size x heads on this GPU against the floor (needs a GPU), and fit
    each kernel's time to fixed + KV bytes / rate over the context lengths. --lens and --batch time ragged or
    batched steps; --serving the serving rows. An earlier bench.json in --out is refused before
    anything is timed, unless --force."""

    staged = None
    try:
        if from_json:
            bench = read_bench(Path(from_json))
        else:
            need_kernels("bench")  # the kernel names resolve through profiler.bench, which imports torch
            points, names = _points(kernel_list, serving, **grid)
            staged = bench_outputs(Path(out_dir), force)  # claimed now, not after minutes on the GPU
            with stop_signals_interrupt():  # SIGTERM / SIGHUP as Ctrl-C: nothing half-written is left
                bench = run_bench(names, points=points, method=method, progress=progress)
    except (RooflineError, KeyboardInterrupt) as exc:
        if staged is not None:
            staged.discard()
        if isinstance(exc, KeyboardInterrupt):
            click.echo(f"Error: interrupted ({getattr(exc, 'how', 'Ctrl-C')}): nothing was written", err=True)
            sys.exit(getattr(exc, "exit_code", 130))
        raise _fail(exc) from None
    if fmt == "json":
        echo_json(json.loads(bench.to_json()))
    else:
        click.echo(render_bench(bench.table, bench.meta, bench.fits))
        if serving_text := render_serving_text(bench.table, bench.meta.get("method", "rotated")):
            click.echo("\n" + serving_text)
    if staged is not None:
        try:
            files = bench.save(staged)
        except RooflineError as exc:
            raise _fail(exc) from None
        progress(f"wrote {' and '.join(str(f) for f in files)}")


def _points(kernel_list, serving, ctx_list, lens_list, batch, seed, **lists):
    """(the points to time, the kernels) the options describe; a usage error for a bad one, before any GPU work."""
    names = comma_list(kernel_list or (SERVING_KERNELS if serving else GRID_KERNELS), _bench_kernel, "--kernel")
    if serving:  # --serving brings its own rows, so naming an option that shapes a grid with it is an error
        source = click.get_current_context().get_parameter_source
        given = [flag for flag, o in GRID_OPTIONS.items() if source(o) == click.core.ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join(given)
            raise BadInputExit(
                f"--serving times its own rows (page {SERVING_PAGE_SIZE}, {SERVING_MASK} mask): leave out {flags}"
            )
        return serving_points(), names
    g = grid_lists(**lists)
    try:
        if lens_list:
            return lens_points(
                list(lens_list), batch, seed, g["page_sizes"], g["heads"], g["masks"], g["q_lens"]
            ), names
        ctx_lens = comma_list(ctx_list, parse_ctx_len, "--ctx")
        return grid_points(ctx_lens, g["page_sizes"], g["heads"], g["masks"], g["q_lens"], batch or 1), names
    except WorkloadError as exc:
        raise click.UsageError(str(exc)) from None
