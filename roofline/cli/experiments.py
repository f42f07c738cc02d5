"""`roofline removal` and `roofline gate`: the two GPU experiments behind the verdict and the gate.

`removal` times each verify kernel with parts of its work compiled out (roofline/pipelines/removal_experiment.py);
`profile --why` runs it as a child with `--for KERNEL --spec RUN/spec.json`, the workload read from the run.
`gate` measures how often compare's gate fails A/A and catches a known slowdown (roofline/pipelines/gate.py).
Both need a CUDA GPU except `gate --from-dir`.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from kernels.spec import TREE_MASKS, VerifyWorkload, ctx_text, parse_ctx_len
from profiler.rundir import parse_spec
from roofline.cli.common import (
    WORKLOAD_OPTIONS,
    BadInputExit,
    comma_list,
    echo_json,
    fail,
    format_option,
    kernel_name,
    make_workload,
    need_kernels,
    out_option,
    progress,
    workload_options,
)
from roofline.pipelines.request import DEFAULT_TIMING_ROUNDS
from roofline.pipelines.why import EXPERIMENT_KERNELS, WHY_KERNELS


def _experiment_kernel(name: str) -> str:
    if name not in EXPERIMENT_KERNELS:
        raise ValueError(f"known: {', '.join(EXPERIMENT_KERNELS)}")
    return name


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("a comma list of positive integers expected")
    return value


def spec_workload(path: str) -> VerifyWorkload:
    """The workload of a run's spec.json (what `profile --why` hands its experiment); one line when it cannot."""
    try:
        return VerifyWorkload.from_dict(parse_spec(json.loads(Path(path).read_text()), path).workload)
    except (OSError, ValueError) as exc:
        raise BadInputExit(f"--spec {path}: {str(exc).splitlines()[0]}") from None


@click.command("removal")
@click.option("--kernel", "kernels", default=",".join(EXPERIMENT_KERNELS), show_default=True, help="comma list")
@click.option("--ctx", "ctx", default=ctx_text(VerifyWorkload().ctx_len), show_default=True, help="comma list")
@click.option("--heads", default="8,64", show_default=True, help="comma list")
@click.option("--page-size", "pages", default="64,1", show_default=True, help="comma list")
@click.option("--mask", type=click.Choice(TREE_MASKS), default=None, help="every verify kernel's [default: each one's]")
@click.option("--method", type=click.Choice(["graph", "rotated"]), default="graph", show_default=True)
@out_option("out", "write <kernel>.json (roofline-removal/1) per kernel into this folder", folder=True)
@click.option(
    "--for",
    "registered",
    type=click.Choice(WHY_KERNELS),
    default=None,
    help="the subject this kernel's default plan launches at the workload of --spec (what `profile --why` runs)",
)
@click.option("--spec", "spec", type=click.Path(dir_okay=False), default=None, help="with --for: a run's spec.json")
@click.option("--file", "file", type=click.Path(dir_okay=False), default=None, help="with --for: the document")
@format_option()
def removal_cmd(kernels, ctx, heads, pages, mask, method, out, registered, spec, file, fmt) -> None:
    """Time each verify kernel with parts of its work compiled out (needs a GPU): what sets its pace."""
    if registered and (spec is None or file is None):
        raise BadInputExit(
            "--for needs --spec (the run's spec.json: its workload) and --file (where its document goes)"
        )
    need_kernels("removal")
    from roofline.pipelines import removal_experiment as cuts  # lazy: torch

    made_by = shlex.join(["roofline", "removal", *sys.argv[2:]])
    try:
        if registered:
            sys.exit(cuts.run_for(registered, spec_workload(spec), Path(file), method, made_by))
        grid = (comma_list(ctx, parse_ctx_len, "--ctx"), comma_list(heads, _positive, "--heads"))
        names = comma_list(kernels, _experiment_kernel, "--kernel")
        pages_ = comma_list(pages, _positive, "--page-size")
        docs = cuts.run_experiment(
            names, grid[0], grid[1], pages_, mask, Path(out) if out else None, made_by, method=method
        )
    except cuts.NoGpu as exc:
        raise fail(exc) from None
    if fmt == "json":
        echo_json(docs)
    else:
        click.echo(cuts.table(docs))


@click.command("gate")
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--kernel", default="triton_mla_fast", show_default=True)
@workload_options
@click.option("--runs", type=click.IntRange(min=2), default=5, show_default=True, help="runs of A")
@click.option("--runs-b", type=click.IntRange(min=0), default=3, show_default=True, help="runs of B, between A's")
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=DEFAULT_TIMING_ROUNDS,
    show_default=True,
    help="rounds a run, each its own process (profile's default)",
)
@click.option("--samples", type=click.IntRange(min=1), default=8, show_default=True, help="samples a round")
@click.option("--slower-pct", type=float, default=3.0, show_default=True, help="B this much slower (a spin)")
@click.option("--thresholds", default="0,1,2", show_default=True, help="gate thresholds PCT to evaluate")
@click.option("--p-value", type=float, default=None, help="the gate's p-value [default: compare's]")
@click.option("--budget-s", type=float, default=300.0, show_default=True, help="stop starting runs after this")
@click.option("--from-dir", is_flag=True, help="recompute the table from OUT's compare_gate.json (no GPU)")
@click.option("--write", type=click.Path(dir_okay=False), default=None, help="with --from-dir: the table as markdown")
@format_option()
def gate_cmd(out, kernel, from_dir, write, thresholds, fmt, **options) -> None:
    """How often compare's gate fails A/A and catches a known slowdown between separate runs (needs a GPU)."""
    from roofline.pipelines import gate  # lazy: the statistics, for this command only

    if from_dir:
        try:
            result = gate.from_dir(Path(out))
        except (OSError, ValueError, KeyError) as exc:  # no compare_gate.json, or not one the gate wrote
            raise BadInputExit(f"{Path(out) / 'compare_gate.json'}: cannot be read ({exc})") from None
        if write:
            Path(write).write_text(gate.table(result, markdown=True) + "\n")
    else:
        result = _gate_run(Path(out), kernel, thresholds, options)
    if fmt == "json":
        echo_json(result)
    else:
        click.echo(gate.table(result))


def _gate_run(out: Path, kernel: str, thresholds: str, options: dict) -> dict:
    """The experiment on this GPU (the workload from the shared options); one line without a GPU."""
    from roofline.pipelines import gate  # lazy: the statistics, for this command only

    workload = make_workload(**{k: options.pop(k) for k in WORKLOAD_OPTIONS})
    need_kernels("gate")
    settings = gate.GateSettings(thresholds=tuple(comma_list(thresholds, float, "--thresholds")), **options)
    result = gate.run_gate(out, kernel_name(kernel), workload, settings, say=progress)
    if result is None:
        raise click.ClickException("roofline gate needs a CUDA GPU (torch sees none)")
    return result
