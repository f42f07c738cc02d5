"""`roofline bench`: every kernel timed on this GPU against the floor, and each one's fixed + bytes / rate fit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kernels.errors import RooflineError
from kernels.registry import get_kernel
from kernels.spec import TREE_MASKS, parse_ctx_len
from profiler.proc import stop_signals_interrupt
from reports.text import render_bench
from roofline.cli.common import (
    comma_list,
    echo_json,
    force_option,
    format_option,
    need_kernels,
    out_option,
    progress,
)
from roofline.cli.common import fail as _fail
from roofline.pipelines.benching import bench_outputs, read_bench, run_bench


def _bench_kernel(name: str) -> str:
    """A registered kernel, or `read` (a bare read of each point's KV bytes)."""
    return name if name == "read" else get_kernel(name).name


def _mask(name: str) -> str:
    if name not in TREE_MASKS:
        raise ValueError(f"{name}: a mask is {' or '.join(TREE_MASKS)}")
    return name


def _grid(ctx_list: str, page_sizes: str, heads_list: str):
    """(text, parser, option) of the grid options bench parses into lists."""
    return ((ctx_list, parse_ctx_len, "--ctx"), (page_sizes, int, "--page-size"), (heads_list, int, "--heads"))


@click.command("bench")
@click.option(
    "--kernel",
    "kernel_list",
    default="triton_mla,triton_mla_decode,triton_mla_fast",
    show_default=True,
    help="comma list; `read` times a bare read of each point's KV bytes",
)
@click.option("--ctx", "ctx_list", default="8k,32k,128k,256k", show_default=True)
@click.option("--page-size", "page_sizes", default="1,64", show_default=True)
@click.option("--heads", "heads_list", default="8,64", show_default=True)
@click.option(
    "--mask",
    "mask_list",
    default="tree",
    show_default=True,
    help="comma list of tree, chain; a kernel that cannot run a point (FlashMLA: chain mask, page 64) "
    "is left out of it, and the table says so",
)
@click.option("--q-len", type=int, default=9, show_default=True)
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
    type=click.Choice(["rotated", "flush"]),
    default="rotated",
    show_default=True,
    help="rotated: CUDA-graph replays over rotated input sets, no L2 flush (as a model's layers read "
    "their own KV caches); flush: triton's do_bench, L2 flushed before each call",
)
@format_option()
def bench_cmd(
    kernel_list, ctx_list, page_sizes, heads_list, mask_list, q_len, out_dir, force, from_json, method, fmt
) -> None:
    """Time every kernel x ctx x page size x heads on this GPU against the floor (needs a GPU), and fit
    each kernel's time to fixed + KV bytes / rate over the context lengths. An earlier bench.json in
    --out is refused before anything is timed, unless --force."""

    staged = None
    try:
        if from_json:
            bench = read_bench(Path(from_json))
        else:
            need_kernels("bench")
            names = comma_list(kernel_list, _bench_kernel, "--kernel")
            masks = tuple(comma_list(mask_list, _mask, "--mask"))
            grid = [comma_list(t, parse, o) for t, parse, o in _grid(ctx_list, page_sizes, heads_list)]
            staged = bench_outputs(Path(out_dir), force)  # claimed now, not after minutes on the GPU
            with stop_signals_interrupt():  # SIGTERM / SIGHUP as Ctrl-C: nothing half-written is left
                bench = run_bench(names, *grid, masks, q_len, method, progress)
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
    if staged is not None:
        try:
            files = bench.save(staged)
        except RooflineError as exc:
            raise _fail(exc) from None
        progress(f"wrote {' and '.join(str(f) for f in files)}")
