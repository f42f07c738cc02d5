"""`roofline model`: the floor the hardware allows for a verify workload, and a kernel's own model (no GPU)."""

from __future__ import annotations

import click

from kernels.errors import RooflineError
from reports.model import render_model
from roofline.cli.common import (
    echo_json,
    format_option,
    gpu_by_name,
    kernel_name,
    make_workload,
    need_kernels,
    progress,
    workload_options,
)
from roofline.cli.common import fail as _fail
from roofline.pipelines import modeling


@click.command("model")
@click.option("--kernel", default=None, help="add this kernel's own model (bytes it moves, grid, time)")
@workload_options
@click.option("--layers", type=int, default=1, show_default=True)
@click.option("--gpu", "gpu_name", default="h200", show_default=True, help="a GPU model; see `roofline gpus`")
@click.option(
    "--compile",
    "compile_",
    is_flag=True,
    help="compile the kernel for the GPU's architecture (needs triton) for blocks per SM",
)
@format_option()
def model_cmd(kernel, layers, gpu_name, compile_, fmt, **wkw) -> None:
    """The floor the hardware allows for a verify workload, and a kernel's own model (no GPU needed)."""
    workload = make_workload(**wkw)
    gpu = gpu_by_name(gpu_name)
    if compile_ and kernel is not None:
        need_kernels("model --compile")
    try:
        m = modeling.model(workload, gpu, layers, kernel_name(kernel) if kernel else None, compile_)
    except RooflineError as exc:
        raise _fail(exc) from None
    if fmt == "json":
        echo_json(m.to_dict())
        return
    for note in m.notes:
        progress(f"note: {note}")
    click.echo(render_model(m))
