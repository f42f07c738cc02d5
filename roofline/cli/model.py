"""`roofline model`: the floor the hardware allows for a verify workload, and a kernel's own model (no GPU)."""

from __future__ import annotations

import click

from kernels.errors import RooflineError
from profiler.checks import strict_json
from reports.model import render_model
from roofline.cli.common import fail as _fail
from roofline.cli.common import (
    format_option,
    gpu_by_name,
    gpu_option,
    kernel_name,
    make_workload,
    need_kernels,
    progress,
    workload_options,
)
from roofline.cli.output import claim, printed_output_options, write
from roofline.pipelines import modeling


@click.command("model")
@click.option("--kernel", default=None, help="add this kernel's own model (bytes it moves, grid, time)")
@workload_options
@click.option("--layers", type=int, default=1, show_default=True)
@click.option(
    "--gpu", "gpu_name", default="h200", show_default=True, callback=gpu_option, help="a GPU model; see `roofline gpus`"
)
@click.option(
    "--compile",
    "compile_",
    is_flag=True,
    help="compile the kernel for the GPU's architecture (needs triton) for blocks per SM",
)
@format_option()
@printed_output_options
def model_cmd(kernel, layers, gpu_name, compile_, fmt, out, force, **wkw) -> None:
    """The floor the hardware allows for a verify workload, and a kernel's own model (no GPU needed)."""
    if compile_ and kernel is None:
        raise click.UsageError("--compile compiles the kernel --kernel names: give --kernel too")
    workload = make_workload(**wkw)
    gpu = gpu_by_name(gpu_name)
    if compile_:
        need_kernels("model --compile")
    staged = claim(out, force)
    try:
        m = modeling.model(workload, gpu, layers, kernel_name(kernel) if kernel else None, compile_)
    except (RooflineError, click.ClickException) as exc:
        if staged is not None:
            staged.discard()
        raise exc if isinstance(exc, click.ClickException) else _fail(exc) from None
    if fmt == "json":
        text = strict_json(m.to_dict()) + "\n"
    else:
        for note in m.notes:
            progress(f"note: {note}")
        text = render_model(m) + "\n"
    click.echo(text, nl=False)
    write(staged, out, text)
